#!/usr/bin/python3
"""Watches the floor view in headless Chromium for an asset that stands (issue 63) and prints
what it saw as one JSON object.

Usage: floor_still.py URL READY_FILE ASSET
It opens URL, waits for the stream to go live, writes READY_FILE, and waits for the asset's
line in the side list to say it stands (`moving: false` arrived in an `asset.position` on the
stream). It reports that line's text and whether the page drew a filled accuracy disc.
"""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from headless import open_browser, waiter

url, ready, asset = sys.argv[1:4]
driver, console_errors = open_browser("chromium", url)
result = {}
wait = waiter(result)
try:
    driver.get(url)
    wait("live", lambda: driver.execute_script("return document.getElementById('status').textContent") == "live", 30)
    open(ready, "w").write("live\n")
    line = "document.querySelector('#assets li[data-asset=\"' + arguments[0] + '\"]')"
    wait("the asset standing", lambda: driver.execute_script(
        "const li = " + line + "; return li && li.dataset.moving === 'false'", asset), 90)
    result["text"] = driver.execute_script("return " + line + ".textContent", asset)
    result["console_errors"] = console_errors()
finally:
    driver.quit()
print(json.dumps(result))
