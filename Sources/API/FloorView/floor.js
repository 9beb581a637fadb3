"use strict";
// The floor view: the daemon's own answers (/v1/floor, /v1/assets, /v1/events) drawn on a
// canvas, moved by the event stream. A canvas, not an element per asset: a thousand assets
// moving every second would otherwise relayout the page each time.
(function () {
  const query = new URLSearchParams(location.search);
  if (query.has("token")) {
    // The token came in the address: the daemon answered with it as an HttpOnly cookie for
    // the page's own requests (the stream cannot send headers; no script can read it), and
    // it is taken out of the address bar and the history.
    query.delete("token");
    history.replaceState(null, "", location.pathname + (query.toString() ? "?" + query : ""));
  }
  const palette = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];
  const trailLength = 8, animateMs = 600;
  const state = {
    floor: null, levels: [0], level: 0, receivers: [], zones: [], assets: new Map(),
    occupants: new Map(), filter: "", bounds: null, silentAfter: 30,
    // Each asset's tag as /v1/tags gives it (worst first); names by asset id, for finding.
    tags: [], names: new Map(),
    // The asset found (Enter in the search box): the map centres on it, zoomed in, until the
    // box is emptied or Escape is pressed.
    found: null,
    // The heat map chosen in the header (SPEC §8): asset-seconds per 1 m cell, or null.
    heat: null
  };
  const findZoom = 3;
  const canvas = document.getElementById("floor"), ctx = canvas.getContext("2d");
  const $ = (id) => document.getElementById(id);

  function fetchJSON(path) {
    return fetch(path, { credentials: "same-origin" }).then((r) => {
      if (!r.ok) throw new Error(path + ": HTTP " + r.status);
      return r.json();
    });
  }

  // The zone analytics (analytics.js): the heat layer and each zone's occupancy chart.
  const analytics = floorAnalytics({ state, ctx, canvas, $, fetchJSON });

  function zoneColor(i) { return palette[i % palette.length]; }

  // Metres and pixels (geometry.js): the floor's bounds, the plan's corners, the transform.
  const { computeBounds, imageCorners, transform, zoneLabel } = floorGeometry({ state, canvas, animateMs, findZoom });

  function visible(asset) {
    if (!state.filter || state.found) return true;
    if (asset.id.toLowerCase().includes(state.filter)) return true;
    if ((state.names.get(asset.id) || "").toLowerCase().includes(state.filter)) return true;
    return (asset.zones || []).some((z) => z.toLowerCase().includes(state.filter));
  }

  function occupiedZones() {
    const occupied = new Set();
    state.occupants.forEach((assets, zone) => { if (assets.size) occupied.add(zone); });
    return occupied;
  }

  function draw(now) {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.round(canvas.clientWidth * dpr), h = Math.round(canvas.clientHeight * dpr);
    if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
    ctx.clearRect(0, 0, w, h);
    if (!state.bounds) return;
    const t = transform(), occupied = occupiedZones();
    const path = (points) => { ctx.beginPath(); points.forEach((p, i) => (i ? ctx.lineTo : ctx.moveTo).call(ctx, t.x(p[0]), t.y(p[1]))); ctx.closePath(); };
    if (state.image) {
      const c = imageCorners();
      ctx.globalAlpha = 0.7;
      ctx.drawImage(state.image.img, t.x(c.left), t.y(c.top), (c.right - c.left) * t.scale, (c.top - c.bottom) * t.scale);
      ctx.globalAlpha = 1;
    }
    if (state.floor) {
      path(state.floor);
      ctx.fillStyle = getComputedStyle(document.body).getPropertyValue("--panel");
      if (!state.image) ctx.fill();
      ctx.strokeStyle = "#999"; ctx.lineWidth = 2 * dpr; ctx.stroke();
    }
    if (state.heat) analytics.drawHeat(t);
    state.zones.forEach((z, i) => {
      const color = zoneColor(i), on = occupied.has(z.id);
      if (z.polygon) {
        if (z.level !== state.level) return;
        path(z.polygon);
      } else {
        const r = state.receivers.find((x) => x.id === z.receiver);
        if (!r || r.level !== state.level) return;
        ctx.beginPath(); ctx.arc(t.x(r.x), t.y(r.y), z.within * t.scale, 0, 2 * Math.PI);
      }
      ctx.globalAlpha = on ? 0.45 : 0.12; ctx.fillStyle = color; ctx.fill();
      ctx.globalAlpha = 1; ctx.strokeStyle = color; ctx.lineWidth = (on ? 2.5 : 1) * dpr; ctx.stroke();
    });
    // Each zone named on the plan in its colour (geometry.js says where): a coloured box alone
    // does not say which is the stockroom.
    ctx.font = "bold " + 12 * dpr + "px system-ui, sans-serif"; ctx.textBaseline = "top";
    state.zones.forEach((z, i) => { const at = zoneLabel(z, t, dpr); if (at) { ctx.fillStyle = zoneColor(i); ctx.fillText(z.id, at[0], at[1]); } });
    ctx.textBaseline = "alphabetic";
    state.receivers.forEach((r) => {
      if (r.level !== state.level) return;
      const x = t.x(r.x), y = t.y(r.y), s = 7 * dpr;
      ctx.beginPath(); ctx.moveTo(x, y - s); ctx.lineTo(x + s, y + s); ctx.lineTo(x - s, y + s); ctx.closePath();
      ctx.fillStyle = r.silent ? "#999" : "#222"; ctx.globalAlpha = r.silent ? 0.5 : 1; ctx.fill(); ctx.globalAlpha = 1;
    });
    // Names beside the dots while they can be read; past 100 assets the list and the filter say who is where.
    const labels = state.assets.size <= 100, text = getComputedStyle(document.body).color;
    // Accuracy circles while they can be told apart (and filled fast enough): past 200 assets
    // they would cover the floor, and filling that many overlapping areas costs ~150 ms a
    // frame without a GPU. The filter brings them back for the assets it keeps.
    let shown = 0;
    state.assets.forEach((a) => { if (a.shown && a.level === state.level && visible(a)) shown++; });
    const halosShown = shown <= 200;
    ctx.font = 11 * dpr + "px system-ui, sans-serif";
    // One path per kind of mark, filled or stroked once: a thousand assets are three draw
    // calls, not three thousand (overlapping accuracy circles read as one area, as they should).
    const halos = new Path2D(), dots = new Path2D(), trails = new Path2D(), named = [];
    // A still tag (moving: false) is where it stopped: a square, no trail and no accuracy
    // circle, so that parked pallets read as parked and their circles do not cover the plan.
    const still = new Path2D();
    // Missing tags (SPEC §7.5): grey, at their last position, with when they were last heard
    // — named whatever the count, since they are what a person looks for.
    const lost = new Path2D(), lostNames = [];
    // Flapping at a zone's edge (zone.flapping, SPEC §10): an amber ring; its alerts are held.
    const flaps = new Path2D();
    let mark = null;
    state.assets.forEach((a) => {
      if (!a.shown || a.level !== state.level || !visible(a)) return;
      const k = Math.min(1, (now - a.movedAt) / animateMs);
      const x = t.x(a.fromX + (a.x - a.fromX) * k), y = t.y(a.fromY + (a.y - a.fromY) * k);
      if (a.id === state.found) mark = [a.id, x, y];
      if (a.missing) {
        lost.moveTo(x + 4 * dpr, y); lost.arc(x, y, 4 * dpr, 0, 2 * Math.PI);
        lostNames.push([a.id + "  last seen " + clock(a.lastSeen), x, y]);
        return;
      }
      const standing = a.moving === false;
      if (!standing && a.trail.length > 1) {
        a.trail.forEach((p, i) => (i ? trails.lineTo(t.x(p[0]), t.y(p[1])) : trails.moveTo(t.x(p[0]), t.y(p[1]))));
        trails.lineTo(x, y);
      }
      if (halosShown && !standing) { const r = Math.max(2, a.accuracy * t.scale); halos.moveTo(x + r, y); halos.arc(x, y, r, 0, 2 * Math.PI); }
      if (standing) still.rect(x - 4 * dpr, y - 4 * dpr, 8 * dpr, 8 * dpr); else { dots.moveTo(x + 4 * dpr, y); dots.arc(x, y, 4 * dpr, 0, 2 * Math.PI); }
      if (a.flapping && a.flapping.length) { flaps.moveTo(x + 8 * dpr, y); flaps.arc(x, y, 8 * dpr, 0, 2 * Math.PI); }
      if (labels) named.push([a.id, x, y]);
    });
    // Accuracy as a hairline ring, not a filled disc: twenty moving tags' discs covered most
    // of a store's plan; rings stay readable where they overlap.
    ctx.strokeStyle = "rgba(80,120,200,.35)"; ctx.lineWidth = 1; ctx.stroke(halos);
    // Hairlines: a stroke wider than a pixel is outlined as a shape first, and a thousand
    // trails' outlines cost ~100 ms a frame without a GPU.
    ctx.strokeStyle = "rgba(80,120,200,.45)"; ctx.lineWidth = 1; ctx.stroke(trails);
    ctx.fillStyle = "#2458c6"; ctx.fill(dots); ctx.fill(still);
    ctx.strokeStyle = "#d89a00"; ctx.lineWidth = 2 * dpr; ctx.stroke(flaps); ctx.lineWidth = 1;
    ctx.fillStyle = text;
    named.forEach(([id, x, y]) => ctx.fillText(id, x + 6 * dpr, y - 6 * dpr));
    ctx.globalAlpha = 0.6; ctx.fillStyle = "#999"; ctx.fill(lost); ctx.strokeStyle = "#666"; ctx.lineWidth = 1; ctx.stroke(lost);
    ctx.fillStyle = "#888"; lostNames.forEach(([label, x, y]) => ctx.fillText(label, x + 6 * dpr, y - 6 * dpr));
    ctx.globalAlpha = 1;
    if (mark) {
      // The asset found: a ring around it, named even past 100 assets; the canvas says where.
      const [id, x, y] = mark;
      ctx.strokeStyle = "#c33"; ctx.lineWidth = 3 * dpr;
      ctx.beginPath(); ctx.arc(x, y, 14 * dpr, 0, 2 * Math.PI); ctx.stroke();
      if (!labels) { ctx.fillStyle = "#c33"; ctx.fillText(id, x + 18 * dpr, y - 10 * dpr); }
      const a = state.assets.get(id);
      canvas.dataset.found = id; canvas.dataset.centre = a.x.toFixed(2) + "," + a.y.toFixed(2);
    } else if (canvas.dataset.found) { delete canvas.dataset.found; delete canvas.dataset.centre; }
  }

  function clock(time) { return time ? new Date(time).toLocaleTimeString() : "never"; }

  // The side lists are text for people (and for tests): brought up to date at most once a
  // second, so that a thousand positions a second do not relayout the page a thousand times.
  const dirty = new Set();
  let zonesDirty = false, listsAt = 0;
  function flushLists(now) {
    if (zonesDirty) { zonesDirty = false; renderZones(); }
    if (!dirty.size || now - listsAt < 1000) return;
    listsAt = now;
    dirty.forEach(renderAsset); dirty.clear();
    $("asset-count").textContent = "(" + state.assets.size + ")";
  }

  function frame(now) { draw(now); flushLists(now); requestAnimationFrame(frame); }

  // Every asset's item in the side list carries what is drawn (data-x, data-y, data-level):
  // the list is the view's text for a screen reader, and what tests read.
  function renderAsset(a) {
    if (!a.li) { a.li = document.createElement("li"); a.li.dataset.asset = a.id; $("assets").appendChild(a.li); }
    a.li.dataset.x = a.x.toFixed(2); a.li.dataset.y = a.y.toFixed(2); a.li.dataset.level = a.level;
    a.li.dataset.missing = !!a.missing;
    a.li.dataset.flapping = (a.flapping || []).join(",");
    a.li.dataset.moving = a.moving === undefined || a.moving === null ? "" : String(a.moving);
    a.li.textContent = a.id + "  (" + a.x.toFixed(1) + ", " + a.y.toFixed(1) + ")" + (a.missing
      ? "  missing, last seen " + clock(a.lastSeen)
      : " ±" + a.accuracy.toFixed(1) + " m" + (a.zones.length ? "  " + a.zones.join(", ") : "")
        + (a.flapping && a.flapping.length ? "  flapping at " + a.flapping.join(", ") : "")
        + (a.moving === false ? "  still" : a.moving ? "  moving" : ""));
    a.li.classList.toggle("hidden", !visible(a));
    a.li.classList.toggle("missing", !!a.missing);
    a.li.classList.toggle("found", a.id === state.found);
  }

  function place(id, p, zones, at) {
    let a = state.assets.get(id);
    if (!a) { a = { id, trail: [], zones: [], shown: false }; state.assets.set(id, a); }
    if (a.shown) {
      a.trail.push([a.x, a.y]); if (a.trail.length > trailLength) a.trail.shift();
      a.fromX = a.x; a.fromY = a.y;
    } else { a.fromX = p.x; a.fromY = p.y; }
    a.x = p.x; a.y = p.y; a.level = p.level; a.accuracy = p.accuracy_m || 0; a.movedAt = at; a.shown = true;
    if ("moving" in p) a.moving = p.moving;
    // Stopped: the trail of its walk is not where it is now.
    if (a.moving === false) a.trail = [];
    setZones(a, zones || []);
    dirty.add(a);
  }

  function setZones(a, zones) {
    a.zones.forEach((z) => state.occupants.get(z)?.delete(a.id));
    a.zones = zones.slice();
    a.zones.forEach((z) => { if (!state.occupants.has(z)) state.occupants.set(z, new Set()); state.occupants.get(z).add(a.id); });
    zonesDirty = true;
  }

  function renderZones() {
    const occupied = occupiedZones();
    state.zones.forEach((z, i) => {
      let li = document.querySelector('#zones li[data-zone="' + CSS.escape(z.id) + '"]');
      if (!li) {
        li = document.createElement("li"); li.dataset.zone = z.id;
        li.innerHTML = '<span class="swatch"></span><span class="name"></span> <span class="count"></span>';
        li.querySelector(".swatch").style.background = zoneColor(i); li.querySelector(".name").textContent = z.id;
        $("zones").appendChild(li);
      }
      const n = state.occupants.get(z.id)?.size || 0;
      li.classList.toggle("occupied", occupied.has(z.id));
      li.querySelector(".count").textContent = n ? "(" + n + ")" : "";
    });
  }

  function addAlert(event) {
    const d = event.data, kind = event.type.replace("beacond.zone.", "");
    const li = document.createElement("li"); li.className = kind;
    li.dataset.zone = d.zone; li.dataset.asset = d.asset; li.dataset.kind = kind;
    li.textContent = new Date(event.time).toLocaleTimeString() + "  " + d.asset + " " + kind + " " + d.zone + (d.dwell_s ? " (" + Math.round(d.dwell_s) + " s)" : "");
    $("alerts").prepend(li);
    while ($("alerts").children.length > 100) $("alerts").lastChild.remove();
  }

  function onEvent(event) {
    if (event.type === "beacond.asset.missing" || event.type === "beacond.asset.found" || event.type === "beacond.asset.battery_low") {
      loadTags().catch(() => {});
    } else if (event.type === "beacond.asset.position") {
      const d = event.data;
      place(d.asset, d, d.zones, performance.now());
    } else if (event.type.startsWith("beacond.zone.")) {
      const d = event.data, a = state.assets.get(d.asset) || { id: d.asset, zones: [], trail: [], shown: false };
      state.assets.set(a.id, a);
      const kind = event.type.slice(13);
      if (kind === "enter" && !a.zones.includes(d.zone)) setZones(a, a.zones.concat([d.zone]));
      if (kind === "exit") setZones(a, a.zones.filter((z) => z !== d.zone));
      if (kind === "flapping") {
        const others = (a.flapping || []).filter((z) => z !== d.zone);
        a.flapping = d.flapping ? others.concat([d.zone]) : others;
        if (a.shown) dirty.add(a);
      }
      zonesDirty = false; renderZones();  // an alert and its zone's state are shown together
      addAlert(event);
    }
  }

  // The tags, worst first as the daemon orders them: missing, then low batteries, then the
  // rest by battery. A missing tag is drawn at its last position, greyed.
  function loadTags() {
    return fetchJSON("/v1/tags").then((answer) => {
      state.tags = answer.tags;
      const box = $("tags");
      box.innerHTML = "";
      answer.tags.forEach((tag) => {
        if (tag.name) state.names.set(tag.asset, tag.name);
        const li = document.createElement("li");
        li.dataset.asset = tag.asset; li.dataset.missing = tag.missing; li.dataset.batteryLow = tag.battery_low;
        li.classList.toggle("missing", tag.missing); li.classList.toggle("low", tag.battery_low);
        const battery = tag.battery ? tag.battery.millivolts + " mV" + (tag.battery_low ? " low" : "") : "no battery reading";
        li.textContent = tag.asset + (tag.name ? " (" + tag.name + ")" : "") + "  "
          + (tag.missing ? "missing, last seen " + clock(tag.last_seen) + "  " : "") + battery;
        box.appendChild(li);
        let a = state.assets.get(tag.asset);
        if (tag.missing && tag.last_position && !(a && a.shown)) {
          place(tag.asset, tag.last_position, [], performance.now());
          a = state.assets.get(tag.asset);
        }
        if (a && (a.missing !== tag.missing || a.lastSeen !== tag.last_seen)) {
          a.missing = tag.missing; a.lastSeen = tag.last_seen; dirty.add(a);
        }
      });
      $("tag-count").textContent = "(" + answer.tags.length + ")";
    });
  }

  // Enter in the search box: the asset whose id or name is the text (or the only one that
  // contains it) is found — its level shown, the map centred on it, marked.
  function find(text) {
    const q = text.trim().toLowerCase();
    if (!q) { state.found = null; return; }
    const all = [...state.assets.values()].filter((a) => a.shown);
    const named = (a) => [a.id.toLowerCase(), (state.names.get(a.id) || "").toLowerCase()];
    let hits = all.filter((a) => named(a).includes(q));
    if (!hits.length) hits = all.filter((a) => named(a).some((n) => n.includes(q)));
    const previous = state.found && state.assets.get(state.found);
    state.found = hits.length === 1 ? hits[0].id : null;
    if (previous) dirty.add(previous);
    if (!state.found) { $("status").dataset.find = hits.length ? "more than one" : "none"; return; }
    delete $("status").dataset.find;
    const a = hits[0];
    if (a.level !== state.level) { state.level = a.level; setLevels(); }
    dirty.add(a); listsAt = 0;
    if (a.li) a.li.scrollIntoView({ block: "nearest" });
  }

  function setLevels() {
    const box = $("levels"); box.innerHTML = "";
    if (state.levels.length < 2) return;
    state.levels.forEach((l) => {
      const b = document.createElement("button"); b.textContent = "Level " + l; b.dataset.level = l;
      b.className = l === state.level ? "current" : "";
      b.onclick = () => { state.level = l; setLevels(); analytics.loadHeat().catch(() => {}); };
      box.appendChild(b);
    });
  }

  function loadFloor() {
    return fetchJSON("/v1/floor").then((f) => {
      state.floor = f.floor; state.levels = f.levels; state.receivers = f.receivers; state.zones = f.zones;
      state.silentAfter = f.silent_after_s;
      const key = JSON.stringify(f.image);
      if (f.image && key !== state.imageKey) {
        state.imageKey = key;
        const img = new Image();
        img.onload = () => { state.image = { img, scale: f.image.scale, origin: f.image.origin }; computeBounds(); };
        img.src = f.image.url;
      }
      if (!state.levels.includes(state.level)) state.level = state.levels[0];
      computeBounds(); setLevels(); renderZones();
    });
  }

  function connect() {
    const stream = new EventSource("/v1/events/stream?type=asset.position,zone.*,asset.missing,asset.found,asset.battery_low");
    stream.onopen = () => { $("status").textContent = "live"; $("status").className = ""; };
    stream.onerror = () => { $("status").textContent = "reconnecting…"; $("status").className = "down"; };
    const handle = (m) => { try { onEvent(JSON.parse(m.data)); } catch (e) { console.warn("unreadable event", e); } };
    ["beacond.asset.position", "beacond.zone.enter", "beacond.zone.exit", "beacond.zone.dwell", "beacond.zone.flapping",
      "beacond.asset.missing", "beacond.asset.found", "beacond.asset.battery_low"].forEach((t) => stream.addEventListener(t, handle));
  }

  // Choosing a heat map brings the zones' charts up to date too: both are the analytics.
  $("heat").addEventListener("change", () => { analytics.loadHeat().catch(() => {}); analytics.loadOccupancy().catch(() => {}); });

  $("filter").addEventListener("input", (e) => {
    state.filter = e.target.value.trim().toLowerCase();
    if (!state.filter) find("");
    state.assets.forEach((a) => a.li && a.li.classList.toggle("hidden", !visible(a)));
  });
  $("filter").addEventListener("keydown", (e) => {
    if (e.key === "Enter") find(e.target.value);
    if (e.key === "Escape") { e.target.value = ""; state.filter = ""; find(""); state.assets.forEach((a) => a.li && renderAsset(a)); }
  });

  Promise.all([loadFloor(), fetchJSON("/v1/status"), fetchJSON("/v1/assets"), fetchJSON("/v1/events?order=newest&limit=50&type=zone.*")])
    .then(([, status, assets, alerts]) => {
      $("gateway").textContent = status.gateway;
      const now = performance.now();
      assets.assets.forEach((a) => {
        if (a.name) state.names.set(a.id, a.name);
        if (a.position) place(a.id, Object.assign({ moving: a.moving }, a.position), a.zones, now);
        if (a.flapping && a.flapping.length) { const s = state.assets.get(a.id); if (s) s.flapping = a.flapping.slice(); }
      });
      alerts.events.slice().reverse().forEach(addAlert);
      connect();
      loadTags().catch(() => {});
      // Receivers' silence, a reload's zones; tags' batteries and last-seen times.
      setInterval(() => { loadFloor().catch(() => {}); loadTags().catch(() => {}); }, 5000);
      // The analytics move by the hour: once a minute is enough.
      analytics.loadOccupancy().catch(() => {});
      setInterval(() => { analytics.loadOccupancy().catch(() => {}); analytics.loadHeat().catch(() => {}); }, 60000);
      requestAnimationFrame(frame);
    })
    .catch((e) => { $("status").textContent = e.message; $("status").className = "down"; });
})();
