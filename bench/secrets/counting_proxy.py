"""A counting proxy in front of moto's server for bench/secrets: forwards
every request unchanged and counts, per (action, secret), how many times
it was asked. GET /counts answers the tally as JSON."""
import http.client
import http.server
import json
import sys
import threading
import urllib.parse

upstream_port = int(sys.argv[2])
counts = {}
lock = threading.Lock()


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        if self.path == "/counts":
            with lock:
                body = json.dumps({"|".join(k): v for k, v in counts.items()}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.forward(b"")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        target = self.headers.get("X-Amz-Target", "")
        if target:
            key = (target, json.loads(body or b"{}").get("SecretId", ""))
        else:
            form = urllib.parse.parse_qs(body.decode(errors="replace"))
            key = (form.get("Action", [""])[0], form.get("RoleSessionName", [""])[0])
        with lock:
            counts[key] = counts.get(key, 0) + 1
        self.forward(body)

    def forward(self, body):
        conn = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=30)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
        conn.request(self.command, self.path, body=body, headers=headers)
        r = conn.getresponse()
        data = r.read()
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("content-length", "transfer-encoding", "connection", "server", "date"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        conn.close()

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Proxy).serve_forever()
