// Debian's Chromium for the console tests (headless, driven by
// playwright-core): one way to launch it, and axe-core's verdict on a page.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

// A browser with a profile of its own; close() ends it and removes the
// profile. Throws when Chromium cannot start (its profile removed).
export async function launch(prefix = 'cw-chromium-') {
  const profile = mkdtempSync(join(tmpdir(), prefix));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
             '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      timeout: 60000,
    });
    const close = async () => {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    };
    return { context, close };
  } catch (e) {
    rmSync(profile, { recursive: true, force: true });
    throw e;
  }
}

let axeSource;
// axe-core's serious and critical violations on the page as it is now, one
// line each: "id: help (nodes)".
export async function axeViolations(page) {
  axeSource ??= readFileSync(new URL('./node_modules/axe-core/axe.min.js', import.meta.url), 'utf8');
  await page.evaluate(axeSource);
  const r = await page.evaluate(() => globalThis.axe.run(document, { resultTypes: ['violations'] }));
  return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.length})`);
}
