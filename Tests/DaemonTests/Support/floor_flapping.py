#!/usr/bin/python3
"""Watches the floor view in headless Chromium for an asset flapping at a zone's edge and
prints what it saw as one JSON object (contract §10, `zone.flapping`).

Usage: floor_flapping.py URL READY_FILE ASSET ZONE
It opens URL, waits for the stream to go live, writes READY_FILE (the test then makes the
asset flap), and waits for the asset's line in the side list to say it flaps at ZONE: the
`zone.flapping` event that arrived on the stream, drawn as the daemon sent it. It reports that
line's text, and the amber of the ring on the canvas.
"""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from headless import open_browser, waiter

url, ready, asset, zone = sys.argv[1:5]
driver, console_errors = open_browser("chromium", url)
result = {}
wait = waiter(result)
try:
    driver.get(url)
    wait("live", lambda: driver.execute_script("return document.getElementById('status').textContent") == "live", 30)
    open(ready, "w").write("live\n")
    line = "document.querySelector('#assets li[data-asset=\"' + arguments[0] + '\"]')"
    wait("the asset flapping", lambda: driver.execute_script(
        "const li = " + line + "; return li && li.dataset.flapping === arguments[1]", asset, zone), 90)
    result["text"] = driver.execute_script("return " + line + ".textContent", asset)
    # The ring's amber (#d89a00): red high, green middling, blue low.
    result["amber_pixels"] = wait("the ring drawn", lambda: driver.execute_script("""
        const c = document.getElementById('floor'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i] > 190 && d[i + 1] > 120 && d[i + 1] < 180 && d[i + 2] < 60) n++;
        return n;
    """), 5)
    result["console_errors"] = console_errors()
finally:
    driver.quit()
print(json.dumps(result))
