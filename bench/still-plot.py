#!/usr/bin/env python3
"""Draws docs/positioning.md's picture of a still tag's hour (issue 63) as plain SVG: every
position published for a tag put down 1 m outside the entrance, with the belief alone
(`motion: stop_and_go`) and anchored (`motion: parked`), side by side.

usage: BENCH_SEEDS=1 BENCH_STILL_DUMP=before.json BENCH_MOTION=stop_and_go \
         beacond-position-bench still 60 bench/still.yaml   (and after.json without BENCH_MOTION)
       bench/still-plot.py OUT.svg before.json after.json
"""
import json
import math
import sys

SIZE, PAD, SPAN = 300, 30, 5.0  # panel pixels, margin, metres either side of the tag


def panel(dump, left):
    x0, y0 = dump["at"]
    scale = SIZE / (2 * SPAN)

    def px(x, y):
        return left + PAD + (x - x0 + SPAN) * scale, PAD + (y - y0 + SPAN) * scale

    out = [f'<rect x="{left + PAD}" y="{PAD}" width="{SIZE}" height="{SIZE}" fill="#fafafa" stroke="#bbb"/>']
    for outline in dump["outlines"]:
        points = " ".join("%.1f,%.1f" % px(x, y) for x, y in outline)
        out.append(f'<polygon points="{points}" fill="#37c" fill-opacity=".08" stroke="#37c" clip-path="url(#c{left})"/>')
    out.insert(0, f'<clipPath id="c{left}"><rect x="{left + PAD}" y="{PAD}" width="{SIZE}" height="{SIZE}"/></clipPath>')
    published = [p for p in dump["published"] if p[0] > 60]
    for i, (t, x, y, _) in enumerate(published):
        cx, cy = px(x, y)
        if left + PAD <= cx <= left + PAD + SIZE and PAD <= cy <= PAD + SIZE:
            out.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="2.2" fill="#c63" fill-opacity=".35"/>')
    if len(published) > 1:
        path = " ".join("%.1f,%.1f" % px(x, y) for _, x, y, _ in published[:400])
        out.insert(2, f'<polyline points="{path}" fill="none" stroke="#c63" stroke-opacity=".15" clip-path="url(#c{left})"/>')
    tx, ty = px(x0, y0)
    out.append(f'<path d="M{tx - 6},{ty} h12 M{tx},{ty - 6} v12" stroke="#000" stroke-width="2"/>')
    # What a person looking saw each second: the last position published, weighed by how long it stood.
    shown, end = [], 3600.0
    everything = dump["published"]
    for i, (t, x, y, _) in enumerate(everything):
        until = everything[i + 1][0] if i + 1 < len(everything) else end
        seconds = max(0.0, until - max(t, 60.0))
        shown.append((math.hypot(x - x0, y - y0), seconds))
    shown.sort()
    total, median = sum(w for _, w in shown), float("nan")
    for e, w in shown:
        total -= 2 * w
        if total <= 0:
            median = e
            break
    out.append(f'<text x="{left + PAD}" y="{PAD - 16}" font-size="12">motion: {dump["motion"]}</text>')
    out.append(
        f'<text x="{left + PAD}" y="{PAD - 4}" font-size="11" fill="#555">{len(published)} publishes, '
        f'shown {median:.2f} m off (median)</text>')
    return out


def main():
    target, before, after = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
    width = 2 * (SIZE + 2 * PAD)
    body = panel(before, 0) + panel(after, SIZE + 2 * PAD)
    body.append(
        f'<text x="{PAD}" y="{SIZE + PAD + 20}" font-size="11" fill="#555">A tag put down for an hour (+), '
        f'{2 * SPAN:.0f} m around it, after its first minute. Blue: the entrance (edge 1 m left), the checkout.</text>')
    open(target, "w").write(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{SIZE + 2 * PAD + 30}" '
        f'font-family="sans-serif">\n' + "\n".join(body) + "\n</svg>\n")


main()
