#!/usr/bin/python3
"""Drives the floor view in a real headless browser and prints what it saw as one JSON object:
Chromium (Debian's chromium, chromium-driver and python3-selenium) or Firefox (Debian's
firefox-esr, over its own Marionette protocol: marionette.py).

Usage: floor_view.py [--browser chromium|firefox] URL SCREENSHOT ASSETS
URL carries ?token=; ASSETS is how many assets the simulated site has. It checks, and reports:
the token left the address bar; the stream went live; one marker (side-list item) per asset;
markers move; a zone.enter that arrives marks its zone occupied in the same turn; the tags
listed worst first (a low battery before healthy ones, then the missing tag first, its marker
greyed with its last-seen time); an asset found by its name is centred and marked; the
browser's console errors. The screenshot is written last. The site's tag-3 has a low
battery and tag-4 is switched off (it is missing a minute later).
"""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from headless import open_browser, waiter

arguments = sys.argv[1:]
browser = "chromium"
if arguments[0] == "--browser":
    browser, arguments = arguments[1], arguments[2:]
url, screenshot, expected = arguments[0], arguments[1], int(arguments[2])
driver, console_errors = open_browser(browser, url)
result = {"browser": browser}
wait = waiter(result)
try:
    driver.set_script_timeout(40)
    driver.get(url)

    wait("live", lambda: driver.execute_script("return document.getElementById('status').textContent") == "live")
    result["address"] = driver.current_url
    # The page went live on its own requests, so the daemon's cookie works; no script sees it.
    result["cookie_visible_to_script"] = "beacond_token=" in driver.execute_script("return document.cookie")
    markers = lambda: driver.execute_script(
        "return [...document.querySelectorAll('#assets li')].map(li => [li.dataset.asset, +li.dataset.x, +li.dataset.y])")
    wait("a marker per asset", lambda: len(markers()) == expected)
    first = {a: (x, y) for a, x, y in markers()}
    result["markers"] = len(first)
    moved = wait("a marker to move", lambda: [a for a, x, y in markers() if (x, y) != first[a]])
    result["moved"] = len(moved)
    # The next zone.enter: in the same turn as its alert is listed, its zone must be occupied.
    result["enter"] = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        new MutationObserver((changes, observer) => {
          for (const change of changes) for (const li of change.addedNodes) {
            if (li.dataset && li.dataset.kind === "enter") {
              const zone = document.querySelector('#zones li[data-zone="' + CSS.escape(li.dataset.zone) + '"]');
              observer.disconnect();
              done({zone: li.dataset.zone, occupied: !!zone && zone.classList.contains("occupied")});
              return;
            }
          }
        }).observe(document.getElementById("alerts"), {childList: true});
    """)
    tags = lambda: driver.execute_script(
        "return [...document.querySelectorAll('#tags li')].map(li => [li.dataset.asset, li.dataset.missing, li.dataset.batteryLow])")
    listed = wait("the tags listed", lambda: (lambda t: t if len(t) == expected and any(b == "true" for _, _, b in t) else None)(tags()))
    order = [a for a, _, _ in listed]
    result["low_before_healthy"] = order.index("tag-3") < min(order.index(a) for a in ("tag-1", "tag-2"))
    # tag-4 was switched off 5 s after the start: missing a minute later.
    wait("tag-4 missing", lambda: (tags() or [[None, None]])[0][:2] == ["tag-4", "true"], timeout=100)
    marker = lambda: driver.execute_script(
        "const li = document.querySelector('#assets li[data-asset=\"tag-4\"]'); "
        "return li ? [li.classList.contains('missing'), li.textContent] : null")
    greyed = wait("tag-4's marker greyed", lambda: (lambda m: m if m and m[0] else None)(marker()))
    result["missing"] = {"first": tags()[0][0], "marker_missing": greyed[0], "marker_text": greyed[1]}
    # Find by name: typed in the search box, Enter.
    driver.execute_script("""
        const box = document.getElementById('filter');
        box.value = 'cart two';
        box.dispatchEvent(new Event('input'));
        box.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter'}));
    """)
    found = wait("the asset found", lambda: driver.execute_script(
        "const c = document.getElementById('floor'), li = document.querySelector('#assets li[data-asset=\"tag-2\"]'); "
        "return c.dataset.found ? [c.dataset.found, c.dataset.centre, li.dataset.x + ',' + li.dataset.y, li.classList.contains('found')] : null"))
    # Centred: the red ring drawn around the canvas's middle (14 px out, to the right).
    ring = wait("the ring at the centre", lambda: driver.execute_script("""
        const c = document.getElementById('floor'), g = c.getContext('2d'), dpr = window.devicePixelRatio || 1;
        const x = Math.round(c.width / 2 + 14 * dpr), y = Math.round(c.height / 2);
        const d = g.getImageData(x - 3, y - 3, 7, 7).data;
        for (let i = 0; i < d.length; i += 4) if (d[i] > 150 && d[i + 1] < 110 && d[i + 2] < 110) return true;
        return false;
    """), timeout=10)
    result["found"] = {"asset": found[0], "centred": bool(ring and found[3])}
    # The analytics (issue 41): the last 24 hours' heat drawn under the zones, and each zone's
    # occupancy by hour beside its name. By now (after a minute) the daemon has written heat.
    driver.execute_script("""
        const s = document.getElementById('heat'); s.value = '24h';
        document.getElementById('filter').value = ''; document.getElementById('filter').dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape'}));
        s.dispatchEvent(new Event('change'));
    """)
    cells = wait("the heat map", lambda: int(driver.execute_script("return document.getElementById('floor').dataset.heatCells || 0")), timeout=45)
    heat_drawn = wait("heat on the canvas", lambda: driver.execute_script("""
        const c = document.getElementById('floor'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let red = 0;
        // The heat's red (#e15759) blended over the floor and under a zone's tint: red well above
        // green, green and blue close (the zones' orange has little blue; the dots are blue).
        for (let i = 0; i < d.length; i += 16) if (d[i] > d[i + 1] + 25 && Math.abs(d[i + 1] - d[i + 2]) < 30) red++;
        return red;
    """), timeout=10)
    occupancy = wait("the zones' occupancy charts", lambda: driver.execute_script(
        "return [...document.querySelectorAll('#zones li')].filter(li => +li.dataset.occupancyPeak > 0)"
        ".map(li => [li.dataset.zone, +li.dataset.occupancyHours, +li.dataset.occupancyPeak, +li.dataset.visits])"), timeout=20)
    result["heat"] = {"cells": cells, "red_pixels": heat_drawn}
    result["occupancy"] = occupancy
    result["canvas"] = driver.execute_script("const c = document.getElementById('floor'); return [c.width, c.height]")
    driver.save_screenshot(screenshot)
    result["console_errors"] = console_errors()
finally:
    driver.quit()
print(json.dumps(result))
