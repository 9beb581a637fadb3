"""The floor view's browser tests' common part: a headless browser to drive, its console's
errors, and waiting for the page with what was seen so far kept for the report."""
import json, os, sys, time
from urllib.parse import urlsplit


def open_browser(browser, url):
    """Chromium (Debian's chromium, chromium-driver and python3-selenium) or Firefox (Debian's
    firefox-esr, over its own Marionette protocol: marionette.py); the driver and a function
    giving the console's errors."""
    if browser == "firefox":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from marionette import Firefox
        driver = Firefox()
        origin = "%s://%s" % urlsplit(url)[:2]
        return driver, lambda: driver.console_errors(origin)
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    options = Options()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,800"):
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    return driver, lambda: [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def waiter(result):
    """wait(what, condition, timeout): polls `condition` until it gives something true and
    returns it; past `timeout`, prints `result` with what it timed out waiting for, and exits."""
    def wait(what, condition, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            value = condition()
            if value:
                return value
            time.sleep(0.1)
        raise SystemExit(json.dumps({**result, "failed": "timed out waiting for " + what}))
    return wait


def watch_live_page(url, ready, asset, until, what, report):
    """The two watching tests' whole run: opens the floor view at `url` in Chromium, waits for
    its stream to go live, writes `ready` (the test then acts), waits up to 90 s for the side
    list's line of `asset` to satisfy the JavaScript expression `until` (over `li`), and prints
    as one JSON object the line's text, what `report(driver, wait)` adds, and the console's
    errors."""
    driver, console_errors = open_browser("chromium", url)
    result = {}
    wait = waiter(result)
    try:
        driver.get(url)
        wait("live", lambda: driver.execute_script("return document.getElementById('status').textContent") == "live", 30)
        open(ready, "w").write("live\n")
        line = "document.querySelector('#assets li[data-asset=\"' + arguments[0] + '\"]')"
        wait(what, lambda: driver.execute_script("const li = " + line + "; return li && (" + until + ")", asset), 90)
        result["text"] = driver.execute_script("return " + line + ".textContent", asset)
        result.update(report(driver, wait))
        result["console_errors"] = console_errors()
    finally:
        driver.quit()
    print(json.dumps(result))
