"""A headless Firefox (Debian's firefox-esr) driven over Marionette, its own remote protocol,
with the few WebDriver calls floor_view.py makes. Debian packages no geckodriver; Firefox
itself listens for Marionette (length-prefixed JSON over TCP), so no driver is needed.

Console errors: the profile makes Firefox print the page's console to its standard output
(`devtools.console.stdout.content`), where uncaught errors appear as
"JavaScript error: URL, line N: ..." and console.error() calls as "console.error: ...".
Firefox's own modules log there too (its experiments loader, offline, reports a failed sync
with a stack of resource:// modules): a console.error whose lines name resource:// or chrome://
code is the browser's, not the page's.
"""
import base64, json, os, shutil, socket, subprocess, tempfile, time


class Firefox:
    def __init__(self, width=1280, height=800, binary="/usr/bin/firefox-esr"):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.profile = tempfile.mkdtemp(prefix="beacond-firefox-")
        with open(os.path.join(self.profile, "user.js"), "w") as f:
            for name, value in [
                ("marionette.port", port), ("devtools.console.stdout.content", True),
                ("devtools.console.stdout.chrome", False), ("browser.shell.checkDefaultBrowser", False),
                ("datareporting.policy.dataSubmissionEnabled", False), ("app.update.disabledForTesting", True),
                ("toolkit.telemetry.reportingpolicy.firstRun", False), ("browser.aboutwelcome.enabled", False),
            ]:
                f.write("user_pref(%s, %s);\n" % (json.dumps(name), json.dumps(value)))
        self.output = open(os.path.join(self.profile, "stdout.log"), "w+")
        self.process = subprocess.Popen(
            [binary, "--headless", "--marionette", "--no-remote", "--profile", self.profile,
             "--window-size=%d,%d" % (width, height)],
            stdout=self.output, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while True:
            try:
                self.socket = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                if time.time() > deadline or self.process.poll() is not None:
                    raise SystemExit(json.dumps({"failed": "Firefox did not start Marionette"}))
                time.sleep(0.2)
        self.buffer = b""
        self.next_id = 0
        self._read()  # {"applicationType": "gecko", "marionetteProtocol": 3}
        self.command("WebDriver:NewSession", {"capabilities": {"alwaysMatch": {}}})
        self.command("WebDriver:SetWindowRect", {"width": width, "height": height})

    def _read(self):
        while b":" not in self.buffer:
            self.buffer += self.socket.recv(65536)
        size, rest = self.buffer.split(b":", 1)
        size = int(size)
        while len(rest) < size:
            rest += self.socket.recv(65536)
        self.buffer = rest[size:]
        return json.loads(rest[:size])

    def command(self, name, parameters=None):
        self.next_id += 1
        data = json.dumps([0, self.next_id, name, parameters or {}]).encode()
        self.socket.sendall(str(len(data)).encode() + b":" + data)
        while True:
            message = self._read()
            if message[0] == 1 and message[1] == self.next_id:
                if message[2]:
                    raise RuntimeError("%s: %s" % (name, message[2].get("message")))
                return message[3]

    # What floor_view.py uses of Selenium's WebDriver.
    def set_script_timeout(self, seconds):
        self.command("WebDriver:SetTimeouts", {"script": int(seconds * 1000)})

    def get(self, url):
        self.command("WebDriver:Navigate", {"url": url})

    @property
    def current_url(self):
        return self.command("WebDriver:GetCurrentURL")["value"]

    def execute_script(self, script, *args):
        return self.command("WebDriver:ExecuteScript", {"script": script, "args": list(args)})["value"]

    def execute_async_script(self, script, *args):
        return self.command("WebDriver:ExecuteAsyncScript", {"script": script, "args": list(args)})["value"]

    def save_screenshot(self, path):
        png = self.command("WebDriver:TakeScreenshot", {"full": False})["value"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(png))

    def console_errors(self, origin):
        self.output.flush()
        with open(self.output.name) as f:
            lines = f.read().splitlines()
        errors = [l for l in lines if l.startswith("JavaScript error: " + origin)]
        # A console.error record runs until the next line that starts a record of its own.
        starts = [i for i, l in enumerate(lines) if l and not l[0].isspace() and not l.startswith("Stack:")
                  and not l.startswith("Message:") and ("://" not in l.split(" ")[0])]
        for i, l in enumerate(lines):
            if not l.startswith("console.error:"):
                continue
            end = next((k for k in starts if k > i), len(lines))
            block = "\n".join(lines[i:end])
            if "resource://" not in block and "chrome://" not in block:
                errors.append(block)
        return errors

    def quit(self):
        try:
            self.command("Marionette:Quit", {"flags": ["eForceQuit"]})
        except Exception:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)
