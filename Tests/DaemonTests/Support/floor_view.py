#!/usr/bin/python3
"""Drives the floor view in a real headless browser and prints what it saw as one JSON object:
Chromium (Debian's chromium, chromium-driver and python3-selenium) or Firefox (Debian's
firefox-esr, over its own Marionette protocol: marionette.py).

Usage: floor_view.py [--browser chromium|firefox] URL SCREENSHOT ASSETS
URL carries ?token=; ASSETS is how many assets the simulated site has. It checks, and reports:
the token left the address bar; the stream went live; one marker (side-list item) per asset;
markers move; a zone.enter that arrives marks its zone occupied in the same turn; the
browser's console errors. The screenshot is written last.
"""
import json, os, sys, time
from urllib.parse import urlsplit

arguments = sys.argv[1:]
browser = "chromium"
if arguments[0] == "--browser":
    browser, arguments = arguments[1], arguments[2:]
url, screenshot, expected = arguments[0], arguments[1], int(arguments[2])
if browser == "firefox":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from marionette import Firefox
    driver = Firefox()
    origin = "%s://%s" % urlsplit(url)[:2]
    console_errors = lambda: driver.console_errors(origin)
else:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    options = Options()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,800"):
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    console_errors = lambda: [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
result = {"browser": browser}
try:
    driver.set_script_timeout(40)
    driver.get(url)

    def wait(what, condition, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            value = condition()
            if value:
                return value
            time.sleep(0.1)
        raise SystemExit(json.dumps({**result, "failed": "timed out waiting for " + what}))

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
    result["canvas"] = driver.execute_script("const c = document.getElementById('floor'); return [c.width, c.height]")
    driver.save_screenshot(screenshot)
    result["console_errors"] = console_errors()
finally:
    driver.quit()
print(json.dumps(result))
