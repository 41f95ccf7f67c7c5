// Drives Causeway's web console in Debian's Chromium (headless, through
// playwright-core) the way people use it, and checks what they would see.
//   node console-e2e.mjs CONFIG.json
// CONFIG: {base, admin_token, shots (a directory for screenshots), pending,
// cancel, keyboard_cancel, other_team_job, researcher, researcher_team,
// provider_person, provider, filter_provider, queue, remove_cluster,
// approver_token (a person who may approve break-glass), breakglass (a
// requested grant)}. Prints one JSON object: {failures: [...],
// seen: {...}}; exit 0 when nothing failed, 1 otherwise, 2 on usage or
// launch errors.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { axeViolations, launch } from './chromium.mjs';

const cfg = JSON.parse(readFileSync(process.argv[2], 'utf8'));
mkdirSync(cfg.shots, { recursive: true });
const failures = [];
const seen = {};
const check = (ok, what) => { if (!ok) failures.push(what); };

// Every browser launched, closed (and its profile removed) at the end.
const launched = [];
async function browser() {
  const b = await launch('cw-console-');
  launched.push(b);
  return b.context;
}

// Every page: nothing fetched from elsewhere, no script errors, no CSP
// violations, and no request answered 404 but the one the test makes on
// purpose (another team's job, by its URL).
const outside = [];
const pageErrors = [];
const notFound = [];
function watch(page) {
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });
  page.on('response', (r) => { if (r.status() === 404) notFound.push(new URL(r.url()).pathname); });
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (!['127.0.0.1', 'localhost'].includes(u.hostname) && u.protocol !== 'blob:' && u.protocol !== 'data:') outside.push(r.url());
  });
}

async function axe(page, name) {
  seen.axe = seen.axe || {};
  seen.axe[name] = await axeViolations(page);
  check(seen.axe[name].length === 0, `axe on ${name}: ${seen.axe[name].join('; ')}`);
}

// Opens a page of the console and waits until it shows it (main's data-at).
async function show(page, hash, heading) {
  await page.goto(`${cfg.base}/${hash}`);
  await page.waitForFunction(() => document.getElementById('main')?.dataset.at === location.hash, null, { timeout: 20000 });
  if (heading) await page.locator('main h1', { hasText: heading }).first().waitFor({ timeout: 5000 });
}

let admin;
let researcher;
// What the script was doing, named in the failure if it stops.
let step = 'launching the browser';
try {
  admin = await browser();
  const page = admin.pages()[0] ?? await admin.newPage();
  watch(page);

  // The page itself: its CSP and security headers.
  step = 'the page itself';
  const first = await page.goto(`${cfg.base}/`);
  const headers = first.headers();
  seen.csp = headers['content-security-policy'];
  check(/default-src 'none'/.test(seen.csp ?? '') && /script-src 'self'/.test(seen.csp ?? '') && !/unsafe-inline/.test(seen.csp ?? ''),
        `Content-Security-Policy is strict: ${seen.csp}`);
  check(headers['x-content-type-options'] === 'nosniff', 'X-Content-Type-Options: nosniff');

  // Sign in with a token, from the keyboard.
  step = 'sign in with a token';
  await page.locator('#token').waitFor();
  await page.focus('#token');
  await page.keyboard.type(cfg.admin_token);
  await page.keyboard.press('Enter');
  await page.locator('main h1', { hasText: 'Jobs' }).waitFor({ timeout: 20000 });
  await page.locator('main table tbody tr').first().waitFor();
  seen.whoami = await page.locator('#whoami').textContent();
  const cookies = await admin.cookies();
  const session = cookies.find((c) => c.name === 'causeway_session');
  seen.cookie = session && { httpOnly: session.httpOnly, sameSite: session.sameSite, secure: session.secure, expires: session.expires };
  check(session && session.httpOnly && session.sameSite === 'Strict' && session.expires > Date.now() / 1000,
        `session cookie is HttpOnly, SameSite=Strict and expires: ${JSON.stringify(seen.cookie)}`);
  check(!(await page.evaluate(() => document.cookie)).includes('causeway_session'), 'the session cookie is not readable by script');
  seen.jobs_listed = await page.locator('main table tbody tr').count();
  const names = await page.locator('main table tbody tr td:first-child').allTextContents();
  seen.job_names = [...new Set(names)];
  await page.screenshot({ path: join(cfg.shots, 'jobs.png'), fullPage: true });
  await axe(page, 'jobs');

  // Filter by team.
  step = 'filter by team';
  await page.fill('input[name=team]', 'vision');
  await page.press('input[name=team]', 'Enter');
  await page.waitForURL(/team=vision/);
  await page.waitForFunction(() => [...document.querySelectorAll('main tbody tr td:nth-child(2)')].every((td) => td.textContent === 'vision'));
  const teams = await page.locator('main tbody tr td:nth-child(2)').allTextContents();
  seen.filtered_teams = [...new Set(teams)];
  check(teams.length > 0 && teams.every((t) => t === 'vision'), `filter team=vision shows only vision: ${teams}`);

  // Filter by provider, from the form: only the jobs that ran there.
  step = 'filter by provider';
  await show(page, '#/jobs', 'Jobs');
  await page.fill('input[name=provider]', cfg.filter_provider);
  await page.press('input[name=provider]', 'Enter');
  await page.waitForURL(/provider=/);
  await page.waitForFunction(() => document.getElementById('main')?.dataset.at === location.hash);
  seen.provider_filtered = [...new Set(await page.locator('main tbody tr td:first-child').allTextContents())].sort();
  seen.provider_filtered_clusters = [...new Set(await page.locator('main tbody tr td:nth-child(5)').allTextContents())].sort();

  // A queue's waiting jobs in the order they will be tried, with positions.
  step = 'a queue\'s waiting jobs in the order they will be tried';
  await show(page, `#/queues/${encodeURIComponent(cfg.queue)}`, `Queue ${cfg.queue}`);
  seen.queue_order = await page.locator('main tbody tr').evaluateAll(
    (trs) => trs.map((tr) => [Number(tr.children[0].textContent), tr.children[1].textContent]));
  await page.screenshot({ path: join(cfg.shots, 'queue.png'), fullPage: true });
  await axe(page, 'queue');
  // The queues' history: jobs started per day and team, read after the page is drawn.
  step = 'the queues\' history';
  await show(page, '#/queues', 'Queues');
  await page.locator('#queue-history table').waitFor({ timeout: 30000 });
  seen.history_started = (await page.locator('#queue-history tbody tr td:nth-child(3)').allTextContents())
    .reduce((t, x) => t + Number(x), 0);

  // GPUs and waste: the notebook the reaper warned is idle now (it is cancelled below).
  step = 'GPUs and waste';
  await show(page, '#/gpus', 'GPUs and waste');
  seen.idle_now = await page.locator('#idle-now tbody tr td:first-child').allTextContents();
  seen.gpus_total = Number((await page.locator('#gpus-total').textContent()).replace(/,/g, ''));
  seen.gpus_allocated = Number((await page.locator('#gpus-allocated').textContent()).replace(/,/g, ''));
  check(seen.gpus_total > 0 && seen.gpus_allocated > 0, `the GPUs page shows capacity and what is allocated: ${seen.gpus_total}, ${seen.gpus_allocated}`);
  // A running job's own page shows what it has cost so far, as the list does.
  step = 'a running job\'s own page shows what it has cost so far';
  await show(page, `#/jobs/${cfg.cancel}`, '');
  seen.running_cost = await page.locator('#job-cost').textContent();
  check(!/^0\.00 /.test(seen.running_cost ?? ''), `a running job's page shows its cost so far: ${seen.running_cost}`);

  // A pending job: why it waits.
  step = 'a pending job';
  await show(page, `#/jobs/${cfg.pending}`, '');
  await page.locator('#why-text').waitFor();
  seen.why_pending = await page.locator('#why-text').textContent();
  seen.why_heading = await page.locator('#why').textContent();
  check(seen.why_heading === 'Why pending' && (seen.why_pending ?? '').length > 10, `a pending job says why it waits: ${seen.why_pending}`);
  // The expected start comes from planning once the page is drawn.
  step = 'the expected start';
  await page.waitForFunction(() => !document.getElementById('expected-start')?.textContent?.includes('asking the planner'),
                             null, { timeout: 30000 });
  seen.expected_start = await page.locator('#expected-start').textContent();
  check(/^(Expected start: \d{4}-|Not expected to start)/.test(seen.expected_start ?? ''),
        `a pending job shows when it is expected to start: ${seen.expected_start}`);
  await page.screenshot({ path: join(cfg.shots, 'pending-job.png'), fullPage: true });
  await axe(page, 'job');

  // A finished job's provenance record, read when opened.
  step = 'a finished job\'s provenance record';
  await show(page, `#/jobs/${cfg.other_team_job}`, '');
  await page.locator('#provenance summary').click();
  await page.waitForFunction(() => !document.querySelector('#provenance pre')?.textContent?.startsWith('Reading'), null, { timeout: 20000 });
  seen.provenance = (await page.locator('#provenance pre').textContent()).slice(0, 120);
  check(seen.provenance.includes('in-toto'), `a finished job's page shows its provenance record: ${seen.provenance}`);
  seen.provenance_summary = await page.locator('#provenance-summary').textContent();
  check(/Builder/.test(seen.provenance_summary ?? ''), `the provenance record is drawn as a summary: ${seen.provenance_summary?.slice(0, 80)}`);
  // A finished job still says why it went where it did, and tells its story.
  step = 'a finished job still says why it went where it did';
  seen.finished_why = await page.locator('#why-text').textContent();
  check(seen.finished_why !== 'completed' && (seen.finished_why ?? '').length > 12, `a finished job says why it ran there: ${seen.finished_why}`);
  seen.story = await page.locator('#events li').count();
  check(seen.story >= 2, `a finished job's events are drawn as a timeline: ${seen.story}`);
  await page.screenshot({ path: join(cfg.shots, 'finished-job.png'), fullPage: true });

  // Cancel with a confirmation (mouse).
  step = 'cancel with a confirmation';
  await show(page, `#/jobs/${cfg.cancel}`, '');
  await page.click('#cancel');
  await page.locator('dialog[open]').waitFor();
  await page.screenshot({ path: join(cfg.shots, 'cancel-confirm.png') });
  await page.locator('dialog button', { hasText: 'Cancel job' }).click();
  await page.locator('main h1 .state', { hasText: 'cancelled' }).waitFor({ timeout: 20000 });
  seen.cancelled = true;

  // Cancel from the keyboard alone: Tab to the button, Enter, Tab to confirm, Enter.
  step = 'cancel from the keyboard alone';
  await show(page, `#/jobs/${cfg.keyboard_cancel}`, '');
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate(() => document.activeElement?.id === 'cancel')) break;
  }
  check(await page.evaluate(() => document.activeElement?.id === 'cancel'), 'the cancel button is reached with Tab');
  await page.keyboard.press('Enter');
  await page.locator('dialog[open]').waitFor();
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await page.locator('main h1 .state', { hasText: 'cancelled' }).waitFor({ timeout: 20000 });
  seen.keyboard_cancelled = true;

  // The cancellation in the audit trail, as who did it.
  step = 'the cancellation in the audit trail';
  await show(page, `#/audit?action=job.cancel`, 'Audit');
  await page.locator('main table').nth(0).waitFor();
  const auditText = await page.locator('main').textContent();
  seen.cancel_audited = auditText.includes(cfg.cancel) && auditText.includes(cfg.keyboard_cancel);
  check(seen.cancel_audited, 'both cancellations are in the audit trail');
  // Newest first: the keyboard's cancellation (the later one) comes first.
  step = 'newest first';
  const cancels = await page.locator('main table').nth(0).locator('tbody tr').allTextContents();
  seen.audit_newest_first = cancels.length === 2 && cancels[0].includes(cfg.keyboard_cancel) && cancels[1].includes(cfg.cancel);
  check(seen.audit_newest_first, `the audit search shows the newest first: ${cancels}`);
  seen.audit_actors = await page.locator('main table').nth(0).locator('tbody tr td:nth-child(2)').allTextContents();
  check(seen.audit_actors.every((a) => a && a !== '—' && !a.startsWith('tok')), `token actors are named: ${seen.audit_actors}`);
  // The chain's state is filled in once verified.
  step = 'the chain\'s state is filled in once verified';
  await page.waitForFunction(() => !document.getElementById('chain')?.textContent?.includes('Verifying'), null, { timeout: 20000 });
  seen.chain = await page.locator('#chain').textContent();
  await axe(page, 'audit');

  // A provider's event found by the person.
  step = 'a provider\'s event found by the person';
  await show(page, `#/audit?actor=${encodeURIComponent(cfg.provider_person)}`, 'Audit');
  const rows = await page.locator('main table').nth(0).locator('tbody tr').allTextContents();
  seen.provider_events = rows.filter((r) => r.includes(cfg.provider)).length;
  check(seen.provider_events > 0, `an imported ${cfg.provider} event is found by ${cfg.provider_person}`);
  await page.screenshot({ path: join(cfg.shots, 'audit.png'), fullPage: true });

  // Cost: the totals shown.
  step = 'cost';
  await show(page, '#/cost', 'Cost');
  seen.cost_total = await page.locator('#cost-total').textContent();
  seen.cost_period = await page.locator('input[name=period]').inputValue();
  seen.csv = await page.locator('#csv').getAttribute('download');
  seen.committed = await page.locator('#committed').textContent();
  check(/\d/.test(seen.committed ?? '') && / [A-Z]{3}$/.test(seen.committed ?? ''), `the reservation commitment is a headline card: ${seen.committed}`);
  seen.bills = await page.locator('#bills').textContent();
  seen.bill_rows = await page.locator('#bills table').first().locator('tbody tr td:first-child').allTextContents();
  check(seen.bill_rows.includes('nebius'), `the imported FOCUS bill is shown beside metered cost: ${seen.bill_rows}`);
  await page.screenshot({ path: join(cfg.shots, 'cost.png'), fullPage: true });
  await axe(page, 'cost');

  for (const [hash, heading, name] of [['#/queues', 'Queues', 'queues'], ['#/gpus', 'GPUs and waste', 'gpus'],
                                       ['#/readiness', 'Readiness', 'readiness'], ['#/people', 'People', 'people']]) {
    await show(page, hash, heading);
    await page.screenshot({ path: join(cfg.shots, `${name}.png`), fullPage: true });
    await axe(page, name);
  }

  // Readiness draws with the shipped estate: owners in words, the four
  // questions and the acceptance runs as text, never raw JSON.
  step = 'readiness draws with the shipped estate';
  await show(page, '#/readiness', 'Readiness');
  seen.readiness_owners = [...new Set(await page.locator('main table').first().locator('tbody tr td:nth-child(4)').allTextContents())];
  check(seen.readiness_owners.some((o) => o.startsWith('group ')), `readiness owners are drawn: ${seen.readiness_owners}`);
  seen.questions = await page.locator('#questions section').count();
  check(seen.questions >= 4, `the four questions are drawn: ${seen.questions}`);
  // No page shows raw JSON.
  step = 'no page shows raw JSON';
  for (const [hash, heading] of [['#/readiness', 'Readiness'], ['#/audit', 'Audit'], ['#/people', 'People'], ['#/gpus', 'GPUs and waste']]) {
    await show(page, hash, heading);
    const text = await page.locator('main').textContent();
    check(!/\{"|":\s*\{|\[\{/.test(text), `${hash} shows no raw JSON`);
  }
  // The bootstrap token is not a person: it sees the request, no Approve.
  step = 'the bootstrap token is not a person';
  await show(page, '#/people', 'People');
  seen.admin_token_approve = await page.locator('button.approve').count();
  check(seen.admin_token_approve === 0, 'a service token is offered no Approve');
  // The server answers HEAD and has an icon.
  step = 'the server answers HEAD and has an icon';
  seen.head = await page.evaluate(async () => (await fetch('/', { method: 'HEAD' })).status);
  seen.favicon = await page.evaluate(async () => { const r = await fetch('/favicon.ico'); return `${r.status} ${r.headers.get('content-type')}`; });
  check(seen.head === 200 && seen.favicon.startsWith('200 image/svg'), `HEAD / and the icon: ${seen.head}, ${seen.favicon}`);

  // Every page at a desktop's size and a phone's: drawn without a script
  // error, and never scrolling sideways (tables scroll in their own box).
  step = 'every page at a desktop\'s size and a phone\'s';
  seen.sideways = [];
  for (const [w, hgt] of [[1440, 900], [390, 844]]) {
    await page.setViewportSize({ width: w, height: hgt });
    for (const [hash, heading, name] of [['#/jobs', 'Jobs', 'jobs'], ['#/queues', 'Queues', 'queues'], ['#/cost', 'Cost', 'cost'],
                                         ['#/gpus', 'GPUs and waste', 'gpus'], ['#/audit', 'Audit', 'audit'],
                                         ['#/readiness', 'Readiness', 'readiness'], ['#/planning', 'Planning', 'planning'],
                                         ['#/people', 'People', 'people'], [`#/jobs/${cfg.other_team_job}`, '', 'job'],
                                         [`#/queues/${encodeURIComponent(cfg.queue)}`, 'Queue', 'queue'],
                                         ['#/services', 'Services', 'services']]) {
      await show(page, hash, heading);
      const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      if (wide > 1) seen.sideways.push(`${name}@${w}: ${wide}px`);
      if (w === 390) await page.screenshot({ path: join(cfg.shots, `phone-${name}.png`), fullPage: true });
    }
  }
  check(seen.sideways.length === 0, `no page scrolls sideways: ${seen.sideways}`);
  await page.setViewportSize({ width: 1280, height: 900 });

  // Planning: the ledger's history replayed on the estate as it is and without one cluster.
  step = 'planning';
  await show(page, '#/planning', 'Planning');
  await page.fill('textarea[name=remove_cluster]', cfg.remove_cluster);
  await page.click('#replay');
  const planTable = page.locator('#plan-report table').first();
  await planTable.waitFor({ timeout: 60000 });
  seen.plan_head = await planTable.locator('thead th').allTextContents();
  seen.plan_first_row = await planTable.locator('tbody tr').first().locator('td').allTextContents();
  await page.screenshot({ path: join(cfg.shots, 'planning.png'), fullPage: true });
  await axe(page, 'planning');

  // A write without the CSRF token, from the console's own page: refused.
  step = 'a write without the CSRF token';
  seen.csrf_refused = await page.evaluate(async (id) =>
    (await fetch(`/v1/jobs/${id}/cancel`, { method: 'POST', credentials: 'same-origin', body: '{}',
                                           headers: { 'Content-Type': 'application/json' } })).status, cfg.pending);
  check(seen.csrf_refused === 403, `a write without the CSRF token is refused: ${seen.csrf_refused}`);

  // The same write from another origin's page (localhost is another site than 127.0.0.1).
  // The request goes out opaque (no-cors); what counts is that the job is
  // still there afterwards.
  // Where "localhost" does not reach the server (it resolves to ::1 only),
  // the server-side origin checks (ConsoleTest's other test) stand alone.
  step = 'the same write from another origin\'s page';
  const evil = await admin.newPage();
  try {
    await evil.goto(cfg.base.replace('127.0.0.1', 'localhost') + '/', { timeout: 10000 });
    await evil.evaluate(async ({ base, id }) => {
      await fetch(`${base}/v1/jobs/${id}/cancel`, { method: 'POST', credentials: 'include', mode: 'no-cors', body: '{}' }).catch(() => {});
    }, { base: cfg.base, id: cfg.pending });
    seen.cross_origin_page = true;
  } catch (e) {
    seen.cross_origin_page = `not reachable: ${e.message.split('\n')[0]}`;
  }
  await evil.close();
  seen.after_cross_origin = await page.evaluate(async (id) => (await (await fetch(`/v1/jobs/${id}`)).json()).state, cfg.pending);
  check(seen.after_cross_origin === 'pending', `a write from another origin's page changes nothing: ${seen.after_cross_origin}`);

  // Sign out: the session ends.
  step = 'sign out';
  await page.click('#sign-out');
  await page.locator('#token').waitFor();
  seen.signed_out = (await page.evaluate(async () => (await fetch('/v1/whoami')).status)) === 401;
  check(seen.signed_out, 'after signing out the API answers 401');

  // An admin through a group approves the break-glass request from the console.
  step = 'break-glass approved by an admin through a group';
  const approver = await browser();
  const ap = approver.pages()[0] ?? await approver.newPage();
  watch(ap);
  await ap.goto(`${cfg.base}/`);
  await ap.locator('#token').waitFor();
  await ap.fill('#token', cfg.approver_token);
  await ap.press('#token', 'Enter');
  // Signed in once the jobs page is drawn (the sign-in page has a heading
  // too: going on before would race the sign-in and land on its page).
  await ap.locator('main h1', { hasText: 'Jobs' }).waitFor({ timeout: 30000 });
  await ap.locator('#whoami').waitFor();
  await ap.goto(`${cfg.base}/#/people`);
  await ap.waitForFunction(() => document.getElementById('main')?.dataset.at === location.hash, null, { timeout: 20000 });
  await ap.locator('button.approve').click();
  await ap.waitForFunction(() => [...document.querySelectorAll('main tbody td')].some((td) => td.textContent === 'active'), null,
                           { timeout: 20000 });
  seen.approved_in_console = true;
  await ap.screenshot({ path: join(cfg.shots, 'breakglass-approved.png'), fullPage: true });
  await approver.close();

  // A researcher signs in with the IdP, sees their team only, and cannot
  // open another team's job by its URL.
  step = 'a researcher signs in with the IdP';
  researcher = await browser();
  const rp = researcher.pages()[0] ?? await researcher.newPage();
  watch(rp);
  await rp.goto(`${cfg.base}/`);
  await rp.locator('#oidc-login').click();
  await rp.locator('main h1', { hasText: 'Jobs' }).waitFor({ timeout: 30000 });
  seen.researcher_whoami = await rp.locator('#whoami').textContent();
  check(seen.researcher_whoami === cfg.researcher, `signed in with the IdP as ${cfg.researcher}: ${seen.researcher_whoami}`);
  await rp.locator('main table tbody tr').first().waitFor();
  const rteams = await rp.locator('main tbody tr td:nth-child(2)').allTextContents();
  seen.researcher_teams = [...new Set(rteams)];
  check(rteams.every((t) => t === cfg.researcher_team), `the researcher sees only ${cfg.researcher_team}: ${rteams}`);
  await rp.screenshot({ path: join(cfg.shots, 'researcher-jobs.png'), fullPage: true });
  await rp.goto(`${cfg.base}/#/jobs/${cfg.other_team_job}`);
  await rp.locator('#not-found').waitFor({ timeout: 20000 });
  seen.other_team_job = await rp.locator('#not-found').textContent();
  const rcookie = (await researcher.cookies()).find((c) => c.name === 'causeway_session');
  check(rcookie && rcookie.httpOnly && rcookie.sameSite === 'Strict', 'the IdP session cookie is HttpOnly and SameSite=Strict');
  // Navigation offers the researcher only what their role lets them read.
  step = 'the researcher\'s navigation';
  seen.researcher_nav = await rp.locator('#nav a').allTextContents();
  check(!seen.researcher_nav.includes('Cost') && !seen.researcher_nav.includes('Audit') && seen.researcher_nav.includes('Jobs'),
        `the researcher's navigation offers only readable pages: ${seen.researcher_nav}`);
} catch (e) {
  failures.push(`stopped at "${step}": ${e.message.split('\n')[0]}`);
} finally {
  seen.outside_requests = outside;
  // 401/403 are answers the pages handle (signed out, a role too narrow);
  // 404s are checked by path below.
  seen.page_errors = pageErrors.filter((m) => !/status of 40[1-4]/.test(m));
  seen.not_found = notFound.filter((p) => p !== `/v1/jobs/${cfg.other_team_job}`);
  check(seen.not_found.length === 0, `no request answered 404: ${seen.not_found}`);
  check(outside.length === 0, `nothing fetched from elsewhere: ${outside}`);
  check(seen.page_errors.length === 0, `no script errors or CSP violations: ${seen.page_errors}`);
  for (const b of launched) await b.close();
}
console.log(JSON.stringify({ failures, seen }, null, 1));
process.exit(failures.length ? 1 : 0);
