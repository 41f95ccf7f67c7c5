// A SIEM's receivers for the export tests, on Node's own http, net and tls:
// every event received is appended, one per line, to FILE.
//
//   node siem.mjs http FILE [--port P] [--fail-first N] [--drop-first N]
//       an HTTP collector taking OCSF JSON lines by POST. --fail-first: the
//       first N requests get 503 and nothing is kept; --drop-first: the
//       first N are kept but the connection is cut before the answer (the
//       sender cannot know they arrived). Prints "url http://127.0.0.1:PORT".
//   node siem.mjs syslog FILE [--port P] [--tls CERT KEY]
//       a syslog receiver (RFC 5424 messages, RFC 6587 octet counting) over
//       TCP or TLS; each message's header goes to FILE.headers. Prints
//       "url tcp://127.0.0.1:PORT" (or tls://localhost:PORT).
import { createServer as createHttp } from 'node:http';
import { createServer as createTcp } from 'node:net';
import { createServer as createTls } from 'node:tls';
import { appendFileSync, readFileSync } from 'node:fs';

const [kind, file, ...rest] = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = rest.indexOf(name);
  return i >= 0 ? rest[i + 1] : dflt;
};
const port = Number(opt('--port', '0'));

if (kind === 'http') {
  let fail = Number(opt('--fail-first', '0'));
  let drop = Number(opt('--drop-first', '0'));
  const server = createHttp((req, res) => {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => {
      if (req.method !== 'POST' || req.headers['content-type'] !== 'application/x-ndjson') {
        res.writeHead(415);
        res.end();
        return;
      }
      if (fail > 0) {
        fail--;
        res.writeHead(503);
        res.end();
        return;
      }
      appendFileSync(file, body);
      if (drop > 0) {
        drop--;
        req.socket.destroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"accepted":true}');
    });
  });
  server.listen(port, '127.0.0.1', () => console.log(`url http://127.0.0.1:${server.address().port}`));
  process.on('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
} else if (kind === 'syslog') {
  const tls = rest.includes('--tls');
  const onConnection = (socket) => {
    let buffer = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const space = buffer.indexOf(0x20);
        if (space < 0) return;
        const length = Number(buffer.subarray(0, space).toString());
        if (!Number.isInteger(length) || length <= 0) { socket.destroy(); return; }
        if (buffer.length < space + 1 + length) return;
        const message = buffer.subarray(space + 1, space + 1 + length).toString();
        buffer = buffer.subarray(space + 1 + length);
        // <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID STRUCTURED-DATA MSG
        const m = /^<(\d{1,3})>1 (\S+) (\S+) (\S+) (\S+) (\S+) (-|\[.*?\]) (.*)$/s.exec(message);
        if (!m) { appendFileSync(file + '.headers', 'MALFORMED ' + message + '\n'); continue; }
        appendFileSync(file + '.headers', [m[1], m[2], m[3], m[4], m[5], m[6], m[7]].join(' ') + '\n');
        appendFileSync(file, m[8] + '\n');
      }
    });
    socket.on('error', () => {});
  };
  const server = tls
    ? createTls({ cert: readFileSync(opt('--tls')), key: readFileSync(rest[rest.indexOf('--tls') + 2]) }, onConnection)
    : createTcp(onConnection);
  const sockets = new Set();
  server.on(tls ? 'secureConnection' : 'connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  server.listen(port, '127.0.0.1', () =>
    console.log(`url ${tls ? 'tls://localhost' : 'tcp://127.0.0.1'}:${server.address().port}`));
  process.on('SIGTERM', () => { for (const s of sockets) s.destroy(); server.close(() => process.exit(0)); });
} else {
  console.error('usage: node siem.mjs http|syslog FILE ...');
  process.exit(2);
}
