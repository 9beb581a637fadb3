#!/usr/bin/python3
"""Watches the floor view in headless Chromium for an asset flapping at a zone's edge and
prints what it saw as one JSON object (contract §10, `zone.flapping`).

Usage: floor_flapping.py URL READY_FILE ASSET ZONE
Waits for the asset's line in the side list to say it flaps at ZONE: the `zone.flapping`
event that arrived on the stream, drawn as the daemon sent it. It reports that line's text,
and the amber of the ring on the canvas.
"""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from headless import watch_live_page

url, ready, asset, zone = sys.argv[1:5]


def amber(driver, wait):
    # The ring's amber (#d89a00): red high, green middling, blue low.
    return {"amber_pixels": wait("the ring drawn", lambda: driver.execute_script("""
        const c = document.getElementById('floor'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i] > 190 && d[i + 1] > 120 && d[i + 1] < 180 && d[i + 2] < 60) n++;
        return n;
    """), 5)}


watch_live_page(url, ready, asset, "li.dataset.flapping === " + repr(zone), "the asset flapping", amber)
