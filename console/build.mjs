// Builds the console into OUTDIR: index.html, app.js (one bundle, minified)
// and app.css, each also gzipped. The binary embeds these files (cmake/embed_console.cmake).
// The type check runs first; a type error fails the build.
//   node build.mjs OUTDIR
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = process.argv[2];
if (!out) {
  console.error('usage: node build.mjs OUTDIR');
  process.exit(2);
}
mkdirSync(out, { recursive: true });
execFileSync(process.execPath, [join(here, 'node_modules/typescript/bin/tsc'), '-p', join(here, 'tsconfig.json')],
             { stdio: 'inherit' });
await build({
  entryPoints: [join(here, 'src/main.ts')],
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['es2020'],
  legalComments: 'none',
  outfile: join(out, 'app.js'),
  logLevel: 'warning',
});
copyFileSync(join(here, 'src/index.html'), join(out, 'index.html'));
copyFileSync(join(here, 'src/app.css'), join(out, 'app.css'));
// Each file also gzipped: the server sends that to browsers that accept it.
let compressed = 0;
for (const f of ['index.html', 'app.js', 'app.css']) {
  const gz = gzipSync(readFileSync(join(out, f)), { level: 9 });
  writeFileSync(join(out, `${f}.gz`), gz);
  compressed += gz.length;
}
console.log(`console: ${compressed} bytes compressed`);
