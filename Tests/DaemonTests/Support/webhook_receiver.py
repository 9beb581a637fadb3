#!/usr/bin/env python3
"""A webhook receiver for beacond's tests: a real HTTP server on 127.0.0.1.

It checks each request's signature with Python's own hmac module (independent of beacond's
HMAC code), answers `--fail N` first requests with `--fail-status`, and appends one JSON line
per request to `--log`: {"n", "status", "signature_ok", "ids", "types", "subjects", "events",
"content_type", "arrived"}. With `--delay S` it answers S seconds late, and logs
{"n", "status": null, "waiting": true} when the request arrives.
With `--standard-secret whsec_...` it verifies each request as a Standard Webhooks receiver
does, with the `standardwebhooks` package from PyPI (run it with scripts/python-tools' venv),
and logs "standard_ok", "standard_error" and "tampered_rejected" (the same request with one
byte of its body changed must fail).
The port it listens on is printed on the first line of standard output.
"""
import argparse, ctypes, hashlib, hmac, http.server, json, signal, sys, threading, time

# Die with the test process: a receiver left behind holds the test runner's output pipe open,
# and the runner then waits for it forever.
ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG

parser = argparse.ArgumentParser()
parser.add_argument("--log", required=True)
parser.add_argument("--secret", default=None)
parser.add_argument("--standard-secret", default=None)
parser.add_argument("--fail", type=int, default=0)
parser.add_argument("--fail-status", type=int, default=500)
parser.add_argument("--status", type=int, default=200)
parser.add_argument("--quiet", action="store_true", help="log only n, status, ids, subjects and arrival")
parser.add_argument("--hang", action="store_true", help="never answer (a receiver that hangs)")
parser.add_argument("--delay", type=float, default=0, help="answer after this many seconds (a slow receiver)")
parser.add_argument("--port", type=int, default=0, help="listen here (a receiver started again where it was)")
parser.add_argument("--strict", action="store_true", help="answer 400 to a body that is not an array of events with ids")
args = parser.parse_args()

lock = threading.Lock()
count = 0


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        global count
        arrived = time.time()
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with lock:
            count += 1
            n = count
        if args.hang:
            with open(args.log, "a") as f:
                f.write(json.dumps({"n": n, "status": None, "hung": True}) + "\n")
            time.sleep(600)
            return
        if args.delay:
            with lock, open(args.log, "a") as f:
                f.write(json.dumps({"n": n, "status": None, "waiting": True, "arrived": arrived}) + "\n")
            time.sleep(args.delay)
        status = args.fail_status if n <= args.fail else args.status
        signature_ok = None
        if args.secret is not None:
            ts = self.headers.get("X-Beacond-Timestamp", "")
            expected = "sha256=" + hmac.new(args.secret.encode(), ts.encode() + b"." + body, hashlib.sha256).hexdigest()
            signature_ok = hmac.compare_digest(expected, self.headers.get("X-Beacond-Signature", ""))
        standard = {}
        if args.standard_secret is not None:
            standard = verify_standard(body, dict(self.headers.items()))
        try:
            events = json.loads(body)
        except ValueError:
            events = []
            if args.strict:
                status = 400
        if args.strict and not (isinstance(events, list) and all(isinstance(e, dict) and e.get("id") for e in events)):
            status, events = 400, []
        record = {
            "n": n, "status": status, "signature_ok": signature_ok,
            "ids": [e.get("id") for e in events], "types": [e.get("type") for e in events],
            "subjects": [e.get("subject") for e in events], "events": events,
            "content_type": self.headers.get("Content-Type"), "arrived": arrived,
            "headers": {k.lower(): v for k, v in self.headers.items()}, **standard,
        }
        if args.quiet:
            record = {k: record[k] for k in ("n", "status", "ids", "subjects", "arrived")}
        with lock, open(args.log, "a") as f:
            f.write(json.dumps(record) + "\n")
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


def verify_standard(body, headers):
    from standardwebhooks.webhooks import Webhook, WebhookVerificationError

    hook = Webhook(args.standard_secret)
    result = {"standard_ok": False, "standard_error": None, "tampered_rejected": False}
    try:
        hook.verify(body, headers)
        result["standard_ok"] = True
    except WebhookVerificationError as error:
        result["standard_error"] = str(error)
    tampered = bytes([body[0] ^ 1]) + body[1:] if body else b"x"
    try:
        hook.verify(tampered, headers)
    except WebhookVerificationError:
        result["tampered_rejected"] = True
    return result


http.server.ThreadingHTTPServer.allow_reuse_address = True
server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
