// Opens a local HTML file in Debian's Chromium (headless, driven by
// playwright-core) with the network cut off, and reports what rendered.
// Usage: node render-page.mjs PAGE.html SCREENSHOT.png
// Prints one JSON object: {svgs, lines, bars, title, requests, errors};
// requests counts what the page tried to fetch beyond itself (it should
// fetch nothing). Exit 0 when the page loaded; 2 on usage or launch errors.
import { resolve } from 'node:path';
import { launch } from './chromium.mjs';

const [page, shot] = process.argv.slice(2);
if (!page || !shot) {
  console.error('usage: node render-page.mjs PAGE.html SCREENSHOT.png');
  process.exit(2);
}
let browser;
try {
  browser = await launch('cw-chromium-');
} catch (e) {
  console.error(`launching Chromium: ${e.message}`);
  process.exit(2);
}
const { context } = browser;
const url = 'file://' + resolve(page);
let requests = 0;
const errors = [];
try {
  await context.route('**/*', (route) => {
    if (route.request().url() === url) return route.continue();
    requests++;
    return route.abort();
  });
  const tab = await context.newPage();
  tab.on('pageerror', (e) => errors.push(e.message));
  tab.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await tab.goto(url, { waitUntil: 'load', timeout: 30000 });
  const found = await tab.evaluate(() => ({
    svgs: document.querySelectorAll('svg.plot').length,
    lines: document.querySelectorAll('svg.plot polyline.series').length,
    bars: document.querySelectorAll('svg.plot rect.series').length,
    title: document.title,
    drawn: [...document.querySelectorAll('svg.plot')].every((s) => s.getBoundingClientRect().width > 0),
  }));
  await tab.screenshot({ path: shot, fullPage: true });
  console.log(JSON.stringify({ ...found, requests, errors }));
} finally {
  await browser.close();
}
