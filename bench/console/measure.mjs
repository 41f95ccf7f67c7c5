// The console's first meaningful render, measured in Debian's Chromium with
// the Performance API: each page loaded afresh (signed in), from navigation
// start to the mark the console sets once the page's data is drawn
// ("causeway:rendered"). Fills the server first when asked:
//   node measure.mjs BASE TOKEN [--jobs N] [--bill FILE] [--loads N]
// --jobs N submits N jobs (teams, GPU types and durations varied, 16 at a
// time) and waits until none is active; --bill imports a FOCUS file.
// Prints one JSON object: {jobs, pages: {name: {p50_ms, p95_ms, max_ms}}}.
import { createRequire } from 'node:module';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, '../../tests/peers/package.json'));
const { chromium } = require('playwright-core');

const [base, token, ...rest] = process.argv.slice(2);
const opt = (name, d) => { const i = rest.indexOf(name); return i >= 0 ? rest[i + 1] : d; };
const jobs = Number(opt('--jobs', 0));
const loads = Number(opt('--loads', 20));
const auth = { Authorization: `Bearer ${token}` };

async function call(method, path, body, type = 'application/json') {
  const r = await fetch(base + path, { method, headers: { ...auth, 'Content-Type': type }, body });
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
  return r.json();
}

if (jobs > 0) {
  const kinds = [['nlp', 'H200:8'], ['vision', 'H100:8'], ['vision', 'A100-80GB:4'], ['research', 'L4:1'], ['research', 'L4:4']];
  let next = 0;
  const t0 = Date.now();
  await Promise.all(Array.from({ length: 16 }, async () => {
    for (let i = next++; i < jobs; i = next++) {
      const [team, gpus] = kinds[i % kinds.length];
      const spec = `name: job-${i}\nresources:\n  accelerators: ${gpus}\n  labels: {team: ${team}, owner: user${i % 40}@corp.example}\n` +
                   `run: python train.py\nsim: {duration: ${5 + (i % 7) * 10}m, exit_code: ${i % 23 === 0 ? 1 : 0}}\n`;
      await call('POST', '/v1/jobs', JSON.stringify({ spec }));
    }
  }));
  console.error(`submitted ${jobs} jobs in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  // Until nothing runs and the queues stop moving (a team over its monthly
  // budget keeps its jobs pending), or ten minutes.
  let last = '';
  for (let stable = 0; stable < 3 && Date.now() - t0 < 600000;) {
    const queues = (await call('GET', '/v1/queues')).queues;
    const now = JSON.stringify(queues.map((q) => [q.name, q.pending, q.running]));
    stable = queues.every((q) => q.running === 0) && now === last ? stable + 1 : 0;
    last = now;
    await new Promise((r) => setTimeout(r, 1000));
  }
  console.error(`settled after ${((Date.now() - t0) / 1000).toFixed(1)} s: ${last}`);
}
if (opt('--bill')) {
  const r = await call('POST', '/v1/cost/bills?provider=nebius&name=year.csv', readFileSync(opt('--bill')), 'text/csv');
  console.error(`imported the bill: ${JSON.stringify(r).slice(0, 200)}`);
}

const oneJob = (await call('GET', '/v1/jobs?limit=1')).jobs[0]?.id;
// The queue with the most waiting (its page lists them in order).
const queue = (await call('GET', '/v1/queues')).queues.sort((a, b) => b.pending - a.pending)[0]?.name;
const pages = { jobs: '#/jobs', job: `#/jobs/${oneJob}`, queues: '#/queues', queue: `#/queues/${queue}`, cost: '#/cost',
                gpus: '#/gpus', audit: '#/audit', readiness: '#/readiness', planning: '#/planning', people: '#/people' };
const profile = mkdtempSync(join(tmpdir(), 'cw-bench-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium', headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const out = { jobs, loads, pages: {} };
try {
  const page = context.pages()[0] ?? await context.newPage();
  await page.goto(`${base}/`);
  await page.fill('#token', token);
  await page.press('#token', 'Enter');
  await page.locator('main h1', { hasText: 'Jobs' }).waitFor({ timeout: 60000 });
  for (const [name, hash] of Object.entries(pages)) {
    const times = [];
    for (let i = 0; i < loads + 2; i++) {
      await page.goto('about:blank');
      await page.goto(`${base}/${hash}`);
      await page.waitForFunction(() => performance.getEntriesByName('causeway:rendered').length > 0, null, { timeout: 60000 });
      const t = await page.evaluate(() => performance.getEntriesByName('causeway:rendered')[0].startTime);
      if (i >= 2) times.push(t);  // the first two warm the server's and the browser's caches
    }
    times.sort((a, b) => a - b);
    const q = (p) => times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)];
    out.pages[name] = { p50_ms: +q(0.5).toFixed(1), p95_ms: +q(0.95).toFixed(1), max_ms: +times[times.length - 1].toFixed(1) };
  }
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log(JSON.stringify(out, null, 1));
