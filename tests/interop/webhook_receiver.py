"""A webhook receiver for cms's end-to-end tests (tests/e2e/webhooks.rs): an HTTP server on
127.0.0.1 that verifies every delivery's signature with the Standard Webhooks reference library
(`standardwebhooks` from PyPI) and writes one JSON line per request it got to stdout:
{"webhook_id", "type", "verified", "error", "answered", "body"}.

    webhook_receiver.py SECRET_FILE [--fail N] [--hang] [--port PORT]

The signing secret is read from SECRET_FILE at each request (the test writes it once cms has
shown it, after the receiver is listening). --fail N answers 500 to the first N attempts of each
webhook-id, then 200; --hang never answers; --port listens on PORT (a receiver started
again where cms delivers), an ephemeral port by default. The port it listens on is printed first, alone on a
line ("listening PORT").
"""

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

arguments = argparse.ArgumentParser()
arguments.add_argument("secret_file")
arguments.add_argument("--fail", type=int, default=0)
arguments.add_argument("--hang", action="store_true")
arguments.add_argument("--port", type=int, default=0)
options = arguments.parse_args()

attempts = {}
lock = threading.Lock()


def say(line):
    with lock:
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0"))).decode()
        headers = {name: value for name, value in self.headers.items()}
        webhook_id = self.headers.get("webhook-id", "")
        try:
            with open(options.secret_file) as f:
                secret = f.read().strip()
            payload = Webhook(secret).verify(body, headers)
            verified, error, event_type = True, None, payload.get("type")
        except (WebhookVerificationError, OSError, ValueError) as e:
            verified, error, event_type = False, repr(e), None
        with lock:
            attempts[webhook_id] = attempts.get(webhook_id, 0) + 1
            attempt = attempts[webhook_id]
        if options.hang:
            say({"webhook_id": webhook_id, "type": event_type, "verified": verified,
                 "error": error, "answered": None, "body": body})
            time.sleep(3600)
            return
        status = 500 if attempt <= options.fail else 200
        say({"webhook_id": webhook_id, "type": event_type, "verified": verified,
             "error": error, "answered": status, "body": body})
        self.send_response(status)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", options.port), Receiver)
server.daemon_threads = True
say_port = f"listening {server.server_address[1]}\n"
sys.stdout.write(say_port)
sys.stdout.flush()
server.serve_forever()
