#!/usr/bin/env python3
"""Draws one asset's membership of one zone over time as an SVG: where the tag truly was, what
the live edge rule said (zone.enter/zone.exit), and the visits beacond told (zone.visit), with
the belief's mass inside beneath. Input: the file `BENCH_PLOT=file,asset,zone` makes
(`beacond-position-bench zones`); no dependencies beyond Python.

  BENCH_SEEDS=1 BENCH_PLOT=/tmp/plot.txt,4,2 Benchmarks/.build/release/beacond-position-bench zones 1
  python3 bench/zone-plot.py /tmp/plot.txt 1200 1800 > docs/zone-membership.svg
"""
import sys


def main():
    path, start, end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    zone = "zone"
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                zone = line[1:].strip()
                continue
            t, truth, live, visit, mass = line.split()
            if start <= int(t) < end:
                rows.append((int(t), int(truth), int(live), int(visit), float(mass)))
    width, left, lane, gap = 900, 150, 26, 14
    scale = (width - left - 20) / max(1, end - start)
    lanes = [("truly inside", 1, "#2e7d32"), ("live edge rule", 2, "#c62828"), ("zone.visit", 3, "#1565c0")]
    height = 40 + len(lanes) * (lane + gap) + 90
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="13">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="10" y="22" font-weight="bold">One tag and the zone "{zone}", seconds {start}–{end} of a simulated store</text>',
    ]
    y = 40
    for name, column, colour in lanes:
        out.append(f'<text x="10" y="{y + lane * 0.7:.0f}">{name}</text>')
        out.append(f'<rect x="{left}" y="{y}" width="{width - left - 20}" height="{lane}" fill="#f3f3f3"/>')
        run = None
        for t, *values in rows + [(end, 0, 0, 0, 0)]:
            inside = values[column - 1] if t < end else 0
            if inside and run is None:
                run = t
            if not inside and run is not None:
                x = left + (run - start) * scale
                out.append(
                    f'<rect x="{x:.1f}" y="{y}" width="{max((t - run) * scale, 1):.1f}" height="{lane}" fill="{colour}"/>')
                run = None
        changes = sum(1 for a, b in zip(rows, rows[1:]) if a[column] != b[column])
        out.append(f'<text x="{width - 15}" y="{y + lane + 11}" text-anchor="end" font-size="11" fill="#555">{changes} changes</text>')
        y += lane + gap
    # The belief's mass inside the zone, 0 to 1.
    top, bottom = y + 10, y + 70
    out.append(f'<text x="10" y="{(top + bottom) / 2:.0f}">belief inside</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{width - left - 20}" height="{bottom - top}" fill="#f3f3f3"/>')
    points = " ".join(
        f"{left + (t - start) * scale:.1f},{bottom - max(m, 0) * (bottom - top):.1f}" for t, _, _, _, m in rows)
    out.append(f'<polyline points="{points}" fill="none" stroke="#6a1b9a" stroke-width="1"/>')
    out.append(f'<text x="{left}" y="{bottom + 14}" font-size="11" fill="#555">{start} s</text>')
    out.append(f'<text x="{width - 20}" y="{bottom + 14}" font-size="11" fill="#555" text-anchor="end">{end} s</text>')
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    main()
