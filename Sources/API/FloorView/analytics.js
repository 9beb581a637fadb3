"use strict";
// The floor view's zone analytics (SPEC §8), apart from the code that draws the floor: the
// heat map chosen in the header and each zone's occupancy over the last 24 hours in the side
// list. Given the view's state, canvas and helpers by floor.js, which draws the heat with
// the rest of the floor and calls the loads.
function floorAnalytics({ state, ctx, canvas, $, fetchJSON }) {
  // Where the assets were: each 1 m cell red in proportion to its share of the busiest
  // cell's time, under the zones' outlines, so the busiest aisle stands out at a glance.
  function drawHeat(t) {
    const { cells, max } = state.heat;
    if (!max) return;
    ctx.fillStyle = "#e15759";
    cells.forEach((c) => {
      if (c.level !== state.level) return;
      ctx.globalAlpha = 0.08 + 0.62 * Math.sqrt(c.seconds / max);
      ctx.fillRect(t.x(c.x), t.y(c.y + 1), t.scale, t.scale);
    });
    ctx.globalAlpha = 1;
  }

  function loadHeat() {
    const span = $("heat").value;
    if (!span) { state.heat = null; delete canvas.dataset.heatCells; return Promise.resolve(); }
    return fetchJSON("/v1/analytics/heatmap?from=" + span + "&level=" + state.level).then((h) => {
      state.heat = { cells: h.cells, max: h.max_seconds };
      canvas.dataset.heatCells = h.cells.length;
    });
  }

  // Each zone's occupancy over the last 24 hours, an hour a bar, beside its name in the list.
  function loadOccupancy() {
    return Promise.all(state.zones.map((z) =>
      fetchJSON("/v1/zones/" + encodeURIComponent(z.id) + "/stats?from=24h&bucket=hour").then((s) => {
        const li = document.querySelector('#zones li[data-zone="' + CSS.escape(z.id) + '"]');
        if (!li) return;
        let chart = li.querySelector("canvas.occupancy");
        if (!chart) { chart = document.createElement("canvas"); chart.className = "occupancy"; chart.width = 96; chart.height = 18; li.appendChild(chart); }
        const values = s.buckets.map((b) => b.occupancy_mean), peak = Math.max(0, ...values);
        const g = chart.getContext("2d"), w = chart.width / Math.max(1, values.length);
        g.clearRect(0, 0, chart.width, chart.height);
        g.fillStyle = li.querySelector(".swatch").style.background;
        values.forEach((v, i) => { const h = peak ? Math.max(1, (v / peak) * chart.height) : 0; g.fillRect(i * w, chart.height - h, Math.max(1, w - 1), h); });
        chart.title = "occupancy, last 24 h: peak " + peak.toFixed(2) + " assets (hourly mean), " + s.total.visits + " visits";
        li.dataset.occupancyHours = values.length; li.dataset.occupancyPeak = peak; li.dataset.visits = s.total.visits;
      })));
  }

  return { drawHeat, loadHeat, loadOccupancy };
}
