// An HTTPS front for a plain-HTTP server, as a deployment puts one before
// Causeway's issuer (a third party fetches discovery and keys over HTTPS
// only): TLS with the certificate given, every request passed through.
// Prints "listening" once it accepts connections.
//
//   node https-front.mjs PORT CERT KEY UPSTREAM   (UPSTREAM: http://host:port)
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';

const [port, cert, key, upstream] = process.argv.slice(2);
const up = new URL(upstream);
https
  .createServer({ cert: fs.readFileSync(cert), key: fs.readFileSync(key) }, (req, res) => {
    const pass = http.request(
      { host: up.hostname, port: up.port, path: req.url, method: req.method, headers: { ...req.headers, host: up.host } },
      (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      },
    );
    pass.on('error', (e) => {
      res.writeHead(502);
      res.end(String(e));
    });
    req.pipe(pass);
  })
  .listen(Number(port), '127.0.0.1', () => console.log('listening'));
