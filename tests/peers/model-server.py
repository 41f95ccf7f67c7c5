#!/usr/bin/env python3
"""A stand-in for a model server behind a service: answers its readiness
probe (GET /health) and requests (any other path) with its own name, and
takes a switch: POST /fail makes every later answer a 500 (and the probe
fail), POST /heal undoes it. With --delay S each request takes S seconds
(a long answer, to show draining does not cut it). Prints "listening PORT"
once bound. GET /last tells the last other request it had (method, path,
headers, body) as JSON, for a test to check what a prober sent. Standard
library only.

Usage: model-server.py NAME [--port P] [--delay S] [--tag T]
(--tag is not read: it names the process for whoever looks for it)"""
import http.server
import json
import sys
import threading
import time

NAME = sys.argv[1]
PORT = int(sys.argv[sys.argv.index("--port") + 1]) if "--port" in sys.argv else 0
DELAY = float(sys.argv[sys.argv.index("--delay") + 1]) if "--delay" in sys.argv else 0.0
failing = threading.Event()
last = {}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, code, body):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def remember(self, body=""):
        last.clear()
        last.update({"method": self.command, "path": self.path, "headers": dict(self.headers.items()), "body": body})

    def do_GET(self):
        if self.path == "/last":
            self.answer(200, json.dumps(last))
            return
        self.remember()
        if self.path == "/health":
            self.answer(500 if failing.is_set() else 200, NAME)
            return
        if DELAY:
            time.sleep(DELAY)
        self.answer(500 if failing.is_set() else 200, NAME)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode()
        if self.path not in ("/fail", "/heal"):
            self.remember(body)
            if DELAY:
                time.sleep(DELAY)
        if self.path == "/fail":
            failing.set()
        elif self.path == "/heal":
            failing.clear()
        self.answer(200, NAME)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
server.daemon_threads = True
print("listening", server.server_address[1], flush=True)
server.serve_forever()
