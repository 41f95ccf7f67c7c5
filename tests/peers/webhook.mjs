// A webhook receiver for the identity tests: each POSTed body is appended,
// one JSON document per line, to the file named on the command line.
//
//   node webhook.mjs FILE        prints "url http://127.0.0.1:PORT" when ready
import { createServer } from 'node:http';
import { appendFileSync } from 'node:fs';

const file = process.argv[2];
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => { body += chunk; });
  req.on('end', () => {
    appendFileSync(file, body.replace(/\n/g, ' ') + '\n');
    res.writeHead(204);
    res.end();
  });
});
server.listen(0, '127.0.0.1', () => console.log(`url http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
