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
