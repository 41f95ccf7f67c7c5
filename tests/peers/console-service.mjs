// Drives one service's page of Causeway's web console in Debian's Chromium
// (headless, through playwright-core) and reports what a person would see.
//   node console-service.mjs CONFIG.json
// CONFIG: {base, admin_token, shots (a directory for screenshots), service
// (its name)}. Prints one JSON object: {failures: [...], seen: {...}}; exit 0
// when nothing failed, 1 otherwise. What the page showed is compared with
// the API by the caller (tests/integration/console_test.cc).
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { axeViolations, launch } from './chromium.mjs';

const cfg = JSON.parse(readFileSync(process.argv[2], 'utf8'));
mkdirSync(cfg.shots, { recursive: true });
const failures = [];
const seen = {};
const check = (ok, what) => { if (!ok) failures.push(what); };
const pageErrors = [];

let browser;
let step = 'launching the browser';
try {
  browser = await launch('cw-console-');
  const page = browser.context.pages()[0] ?? await browser.context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });

  step = 'sign in with a token';
  await page.goto(`${cfg.base}/`);
  await page.locator('#token').waitFor();
  await page.fill('#token', cfg.admin_token);
  await page.press('#token', 'Enter');
  await page.locator('main h1', { hasText: 'Jobs' }).waitFor({ timeout: 20000 });

  // The list, then the service's own page through its link.
  step = 'the services list';
  await page.goto(`${cfg.base}/#/services`);
  await page.locator('main h1', { hasText: 'Services' }).waitFor({ timeout: 20000 });
  const link = page.locator('main a', { hasText: cfg.service }).first();
  await link.waitFor({ timeout: 20000 });
  const row = page.locator('main tbody tr', { has: page.locator('a', { hasText: cfg.service }) }).first();
  seen.listed_row = await row.locator('td').allTextContents();
  await link.click();

  step = 'the service page';
  await page.locator('main h1', { hasText: `Service ${cfg.service}` }).waitFor({ timeout: 20000 });
  await page.locator('#service-endpoint').waitFor({ timeout: 20000 });
  seen.mode = (await page.locator('#service-mode').textContent()).trim();
  seen.endpoint = (await page.locator('#service-endpoint').textContent()).trim();
  // Each place's table: its caption, and per replica its revision and state.
  seen.places = {};
  for (const table of await page.locator('main table').all()) {
    const caption = (await table.locator('caption').textContent().catch(() => '')).trim();
    if (!/^(Preferred|Alternate|Degraded)/.test(caption)) continue;
    const head = await table.locator('thead th').allTextContents();
    const rev = head.indexOf('Revision');
    const state = head.indexOf('State');
    const rows = [];
    for (const tr of await table.locator('tbody tr').all()) {
      const cells = await tr.locator('td').allTextContents();
      if (cells.length > 1) rows.push({ revision: cells[rev], state: cells[state] });
    }
    seen.places[caption] = rows;
  }
  const kv = await page.locator('main dl dt').allTextContents();
  const values = await page.locator('main dl dd').allTextContents();
  seen.revision = values[kv.indexOf('Revision')] ?? null;
  seen.transitions = await page.locator('#transitions li strong').allTextContents();
  await page.locator('#service-cost, main h2', { hasText: 'Cost' }).first().waitFor({ timeout: 20000 });
  await page.screenshot({ path: join(cfg.shots, 'service.png'), fullPage: true });

  step = 'axe on the service page';
  seen.axe = await axeViolations(page);
  check(seen.axe.length === 0, `axe on the service page: ${seen.axe.join('; ')}`);

  step = 'the service page on a phone';
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await page.locator('#service-endpoint').waitFor({ timeout: 20000 });
  seen.sideways = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(seen.sideways <= 1, `the service page does not scroll sideways on a phone: ${seen.sideways}px`);
  await page.screenshot({ path: join(cfg.shots, 'phone-service.png'), fullPage: true });
} catch (e) {
  failures.push(`stopped at "${step}": ${e.message.split('\n')[0]}`);
} finally {
  seen.page_errors = pageErrors.filter((m) => !/status of 40[1-4]/.test(m));
  check(seen.page_errors.length === 0, `no script errors or CSP violations: ${seen.page_errors}`);
  await browser?.close();
}
console.log(JSON.stringify({ failures, seen }, null, 1));
process.exit(failures.length ? 1 : 0);
