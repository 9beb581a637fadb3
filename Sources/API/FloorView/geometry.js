"use strict";
// The floor view's geometry, apart from what it draws: the floor's bounds in metres (its
// outline, receivers, zones and plan), where the plan's corners and the zones' names fall, and the transform from
// metres to the canvas's pixels — fitted to the canvas, or centred and zoomed on the asset
// found. Given the view's state and canvas by floor.js.
function floorGeometry({ state, canvas, animateMs, findZoom }) {
  function computeBounds() {
    const xs = [], ys = [];
    const add = (x, y) => { xs.push(x); ys.push(y); };
    (state.floor || []).forEach((p) => add(p[0], p[1]));
    state.receivers.forEach((r) => add(r.x, r.y));
    state.zones.forEach((z) => (z.polygon || []).forEach((p) => add(p[0], p[1])));
    if (state.image) { const c = imageCorners(); add(c.left, c.top); add(c.right, c.bottom); }
    if (!xs.length) { add(0, 0); add(10, 10); }
    const pad = 1;
    state.bounds = { minX: Math.min(...xs) - pad, maxX: Math.max(...xs) + pad, minY: Math.min(...ys) - pad, maxY: Math.max(...ys) + pad };
  }

  // The plan's corners in metres: its pixel (0, 0) is top left, the site's origin at `origin`.
  function imageCorners() {
    const im = state.image, s = im.scale;
    return { left: -im.origin[0] / s, top: im.origin[1] / s, right: (im.img.width - im.origin[0]) / s, bottom: (im.origin[1] - im.img.height) / s };
  }

  // Metres to canvas pixels: the floor fitted to the canvas, y growing upwards as on a plan;
  // with an asset found, centred on it and zoomed in.
  function transform() {
    const b = state.bounds, w = canvas.width, h = canvas.height;
    let scale = Math.min(w / (b.maxX - b.minX), h / (b.maxY - b.minY));
    const a = state.found && state.assets.get(state.found);
    if (a && a.shown) {
      // On where its dot is drawn (moving towards its new position), so the mark stays centred.
      const k = Math.min(1, (performance.now() - a.movedAt) / animateMs);
      const cx = a.fromX + (a.x - a.fromX) * k, cy = a.fromY + (a.y - a.fromY) * k;
      scale *= findZoom;
      return { scale, x: (x) => w / 2 + (x - cx) * scale, y: (y) => h / 2 - (y - cy) * scale };
    }
    const ox = (w - scale * (b.maxX - b.minX)) / 2, oy = (h - scale * (b.maxY - b.minY)) / 2;
    return { scale, x: (x) => ox + (x - b.minX) * scale, y: (y) => h - oy - (y - b.minY) * scale };
  }

  // Where a zone's name is written on the canvas: inside its top-left corner (a proximity
  // zone: beside its receiver); null off the level shown.
  function zoneLabel(z, t, dpr) {
    if (z.polygon) {
      if (z.level !== state.level) return null;
      return [Math.min(...z.polygon.map((p) => t.x(p[0]))) + 4 * dpr, Math.min(...z.polygon.map((p) => t.y(p[1]))) + 4 * dpr];
    }
    const r = state.receivers.find((q) => q.id === z.receiver);
    return r && r.level === state.level ? [t.x(r.x) + 12 * dpr, t.y(r.y) + 12 * dpr] : null;
  }

  return { computeBounds, imageCorners, transform, zoneLabel };
}
