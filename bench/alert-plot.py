#!/usr/bin/env python3
"""Draws docs/positioning.md's two pictures of confirmed alerts (issue 62) as plain SVG.

  curve:    the `alerts` bench's printed lines (precision, recall, latency, alerts an
            asset-hour per `confirm`) for each layout, one panel per figure.
  standing: the standing tags' hour (BENCH_ALERT_DUMP of `alerts 1 bench/standing.yaml`):
            truth, the edge rule's say, the instant rule's alerts and what is told now.

usage: bench/alert-plot.py curve OUT.svg NAME=bench-output.txt [NAME=...]
       bench/alert-plot.py standing OUT.svg dump.json
"""
import json
import re
import sys

LINE = re.compile(
    r"confirm\s+(\d+) s, share [\d.]+: P\s+([\d.]+) % R\s+([\d.]+) % lat p50\s+(\d+) p95\s+(\d+) s \|\s+([\d.]+) alerts")
FLAP = re.compile(r"and flapping: P\s+([\d.]+) % R\s+([\d.]+) %.*?\|\s+([\d.]+) alerts/asset-h.*notices ([\d.]+)/asset-h")
COLOURS = ["#2a7", "#37c", "#c63", "#a3a"]


def read_curve(path):
    """[(confirm, precision, recall, p50, p95, alerts/h, flap P, flap R, notices/h)] of the first site."""
    rows, pending = [], None
    for line in open(path):
        m = LINE.search(line)
        if m:
            pending = [float(g) for g in m.groups()]
            continue
        f = FLAP.search(line)
        if f and pending:
            rows.append(pending + [float(g) for g in f.groups()])
            pending = None
    return rows


def panel(x0, y0, w, h, title, series, ymax, xs, unit):
    out = [f'<g transform="translate({x0},{y0})">',
           f'<text x="0" y="-8" font-size="13" font-weight="bold">{title}</text>',
           f'<rect x="0" y="0" width="{w}" height="{h}" fill="none" stroke="#999"/>']
    for k in range(5):
        v = ymax * k / 4
        y = h - h * k / 4
        out.append(f'<line x1="0" x2="{w}" y1="{y}" y2="{y}" stroke="#eee"/>')
        out.append(f'<text x="-6" y="{y + 4}" font-size="10" text-anchor="end">{v:g}{unit}</text>')
    xmax = max(xs)
    for x in xs:
        px = w * x / xmax
        out.append(f'<text x="{px}" y="{h + 14}" font-size="10" text-anchor="middle">{x:g}</text>')
    out.append(f'<text x="{w / 2}" y="{h + 28}" font-size="11" text-anchor="middle">confirm (s)</text>')
    for i, (name, points) in enumerate(series):
        c = COLOURS[i % len(COLOURS)]
        dash = ' stroke-dasharray="4 3"' if "flapping" in name else ""
        path = " ".join(f"{w * x / xmax:.1f},{h - h * min(y, ymax) / ymax:.1f}" for x, y in points)
        out.append(f'<polyline points="{path}" fill="none" stroke="{c}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{w + 6}" y="{14 + 14 * i}" font-size="10" fill="{c}">{name}</text>')
    out.append("</g>")
    return out


def curve(out, sources):
    data = {}
    for item in sources:
        name, path = item.split("=", 1)
        data[name] = read_curve(path)
    svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="1100" height="560" font-family="sans-serif">',
           '<rect width="100%" height="100%" fill="white"/>']
    figures = [("precision", 1, 6, 100, " %"), ("recall", 2, 7, 100, " %"), ("latency p95", 4, None, 70, " s"),
               ("alerts an asset-hour", 5, 8, 200, "")]
    for k, (title, col, flapcol, ymax, unit) in enumerate(figures):
        series = []
        for name, rows in data.items():
            xs = [r[0] for r in rows]
            series.append((name, [(r[0], r[col]) for r in rows]))
            if flapcol is not None:
                series.append((name + ", with flapping", [(r[0], r[flapcol]) for r in rows]))
        x0 = 60 + (k % 2) * 540
        y0 = 40 + (k // 2) * 270
        svg += panel(x0, y0, 280, 190, title, series, ymax, xs, unit)
    svg.append("</svg>")
    open(out, "w").write("\n".join(svg) + "\n")


def standing(out, dump):
    series = json.load(open(dump))
    width, row = 900, 120
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width + 140}" height="{row * len(series) + 40}" '
           'font-family="sans-serif">', '<rect width="100%" height="100%" fill="white"/>']
    for i, s in enumerate(series):
        n = len(s["truth"])
        y0 = 20 + row * i
        sx = lambda t: 120 + width * t / n
        svg.append(f'<text x="4" y="{y0 + 12}" font-size="12" font-weight="bold">tag {s["asset"]}, {s["zone"]}</text>')
        for label, key, dy in [("truth", "truth", 20), ("edge rule", "said", 36)]:
            svg.append(f'<text x="4" y="{y0 + dy + 8}" font-size="10">{label}</text>')
            t = 0
            values = s[key]
            while t < n:
                u = t
                while u < n and values[u] == values[t]:
                    u += 1
                colour = "#2a7" if values[t] else "#ddd"
                svg.append(f'<rect x="{sx(t):.1f}" y="{y0 + dy}" width="{max(sx(u) - sx(t), 0.5):.1f}" height="10" fill="{colour}"/>')
                t = u
        for label, key, dy in [(f"confirm 0s: {len(s['instant'])}", "instant", 62),
                               (f"now: {len(s['told'])}", "told", 88)]:
            svg.append(f'<text x="4" y="{y0 + dy + 4}" font-size="10">{label}</text>')
            for e in s[key]:
                colour = {"enter": "#2a7", "exit": "#c63"}.get(e["kind"], "#a3a")
                svg.append(f'<line x1="{sx(e["t"]):.1f}" x2="{sx(e["t"]):.1f}" y1="{y0 + dy - 8}" y2="{y0 + dy + 8}" stroke="{colour}"/>')
    svg.append(f'<text x="120" y="{row * len(series) + 34}" font-size="10">one hour; green enter, red exit, purple flapping</text>')
    svg.append("</svg>")
    open(out, "w").write("\n".join(svg) + "\n")


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[1] not in ("curve", "standing"):
        sys.exit(__doc__)
    if sys.argv[1] == "curve":
        curve(sys.argv[2], sys.argv[3:])
    else:
        standing(sys.argv[2], sys.argv[3])
