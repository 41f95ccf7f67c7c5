// Jobs: the list (filters, paging, refreshed while open) and a job's page:
// why it is here or still pending, its attempts on a timeline, what each
// cost (and what went to attempts that did not finish), checkpoints, logs
// (followed while it runs), its provenance, and cancel where allowed.
import { api, ApiError, qs } from '../api';
import { confirmDialog, h, kv, link, money, stateBadge, table, when, type Kid } from '../dom';
import { timeline } from '../charts';
import type { Page } from '../main';

const STATES = ['', 'pending', 'admitted', 'running', 'succeeded', 'failed', 'cancelled'];
const ACTIVE = new Set(['pending', 'admitted', 'running']);

function jobRows(jobs: any[]): Kid[][] {
  return jobs.map((j) => [
    link(`#/jobs/${encodeURIComponent(j.id)}`, j.name || j.id), j.team, j.owner, stateBadge(j.state),
    j.cluster || '—', money(j.cost_micros), when(j.created_at),
  ]);
}

export const jobsPage: Page = async (_params, q, live) => {
  const field = (name: string, label: string) =>
    h('label', {}, label, h('input', { name, value: q.get(name) ?? '', size: 18, autocomplete: 'off' }));
  const state = h('select', { name: 'state' },
    STATES.map((s) => h('option', { value: s, selected: (q.get('state') ?? '') === s }, s || 'any')));
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter jobs' },
    field('team', 'Team'), field('owner', 'Owner'), field('provider', 'Provider'), h('label', {}, 'State', state),
    h('button', { type: 'submit' }, 'Filter'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const f = new FormData(form);
    location.hash = '#/jobs' + qs({ team: String(f.get('team') ?? ''), owner: String(f.get('owner') ?? ''),
                                     provider: String(f.get('provider') ?? ''), state: String(f.get('state') ?? '') });
  });
  const params = { team: q.get('team') ?? '', owner: q.get('owner') ?? '', provider: q.get('provider') ?? '',
                   state: q.get('state') ?? '', cursor: q.get('cursor') ?? '', limit: 50 };
  const holder = h('div', { 'aria-live': 'polite' });
  const pager = h('div', { class: 'pager' });
  const load = async () => {
    const data = await api(`/v1/jobs${qs(params)}`);
    holder.replaceChildren(table('Jobs, newest first', ['Job', 'Team', 'Owner', 'State', 'Cluster', '#Cost', 'Submitted'],
                                 jobRows(data.jobs)));
    pager.replaceChildren(
      params.cursor ? link('#/jobs' + qs({ ...params, cursor: '', limit: undefined }), 'Newest') : '',
      data.next ? link('#/jobs' + qs({ ...params, cursor: data.next, limit: undefined }), 'Older jobs') : '');
  };
  await load();
  live(load, 5000);
  return [h('h1', {}, 'Jobs'), form, holder, pager];
};

// When a pending job is expected to start: planning runs the scheduler
// ahead, which takes longer than the rest of the page, so it is asked for
// once the page is drawn and filled in when it comes.
function expectedStart(id: string): HTMLElement {
  const p = h('p', { id: 'expected-start', 'aria-live': 'polite', class: 'muted' }, 'Expected start: asking the planner…');
  api(`/v1/plan/jobs/${encodeURIComponent(id)}`).then((f) => {
    const e = (f.jobs ?? []).find((j: any) => j.job === id) ?? f.jobs?.[0];
    if (!e) throw new Error('no forecast for this job');
    const pos = e.position ? ` Position ${e.position.position} of ${e.position.queued} in queue ${e.queue ?? ''}.` : '';
    p.className = '';
    p.textContent = e.starts
      ? `Expected start: ${when(e.start)} (in about ${Math.round(e.start_in_seconds / 60)} min, ± ${Math.round(e.precision_seconds / 60)} min) ` +
        `on ${e.placement?.cluster ?? '?'}, expected cost ${e.expected_cost?.amount} ${e.expected_cost?.currency}.${pos}`
      : `Not expected to start within the planning horizon: ${e.waiting ?? ''}.${pos}`;
  }).catch((err) => { p.textContent = `Expected start: ${(err as Error).message}`; });
  return p;
}

function explainPanel(ex: any): Kid {
  const sched = ex.scheduler ?? {};
  const cands: any[] = sched.candidates ?? [];
  const forecast = ex.state === 'pending' ? expectedStart(ex.job) : null;
  return h('section', { 'aria-labelledby': 'why' },
    h('h2', { id: 'why' }, ex.state === 'pending' || ex.state === 'admitted' ? 'Why pending' : 'Why here'),
    h('p', { id: 'why-text' }, ex.reason || sched.placement?.why || sched.reason || sched.waiting || '—'),
    forecast,
    sched.queue ? h('p', { class: 'muted' }, `Queue ${sched.queue}`) : null,
    table('Candidate clusters the scheduler weighed', ['Cluster', 'Accelerators', 'Eligible', 'Why / price'],
      cands.map((c) => [c.cluster, c.accelerators, c.eligible ? 'yes' : 'no',
                        c.eligible ? `${c.price_per_gpu_hour} per GPU-hour${c.reserved ? ' (reserved)' : ''}` : c.reason])));
}

function attemptsPanel(job: any): Kid {
  const attempts: any[] = job.attempts ?? [];
  if (attempts.length === 0) return h('section', {}, h('h2', {}, 'Attempts'), h('p', { class: 'muted' }, 'Not started yet.'));
  const now = Date.now();
  const wasted = attempts.filter((a) => a.state !== 'succeeded' && a.state !== 'running')
                         .reduce((t, a) => t + (a.cost_micros ?? 0), 0);
  return h('section', { 'aria-labelledby': 'attempts' },
    h('h2', { id: 'attempts' }, 'Attempts'),
    timeline(`Attempts of ${job.name}`, attempts.map((a) => ({
      label: `#${a.number} ${a.cluster}`.slice(0, 14), state: a.state,
      start: Date.parse(a.started_at), end: a.ended_at ? Date.parse(a.ended_at) : now }))),
    table('Each attempt and what it cost', ['#', 'Cluster', 'State', 'Started', 'Ended', '#GPUs', '#Cost', 'Failure'],
      attempts.map((a) => [a.number, a.cluster, stateBadge(a.state), when(a.started_at), when(a.ended_at), a.gpus,
                           money(a.cost_micros), a.failure_class || '—'])),
    h('p', { id: 'wasted' }, `Spent on attempts that did not finish: ${money(wasted)}`));
}

async function logsPanel(job: any, live: (fn: () => Promise<void>, ms: number) => void): Promise<Kid> {
  const pre = h('pre', { class: 'logs', tabindex: 0, 'aria-label': 'Log output' });
  let offset = 0;
  const follow = async () => {
    try {
      const r = await fetch(`/v1/jobs/${encodeURIComponent(job.id)}/logs${qs({ offset })}`, { credentials: 'same-origin' });
      if (!r.ok) {
        if (offset === 0) pre.textContent = (await r.json().catch(() => null))?.error?.message ?? `HTTP ${r.status}`;
        return;
      }
      const text = await r.text();
      offset = Number(r.headers.get('X-Causeway-Next-Offset') ?? offset + text.length);
      pre.append(text);
    } catch {
      /* the next poll tries again */
    }
  };
  if ((job.attempts ?? []).length === 0) return null;
  await follow();
  if (job.state === 'running') live(follow, 3000);
  return h('section', {}, h('h2', {}, 'Logs'), pre);
}

// The job's provenance record (an in-toto Statement), read when opened; the
// signed DSSE envelope is one link away for anyone who wants to verify it.
function provenancePanel(id: string): HTMLElement {
  const body = h('pre', { tabindex: 0, 'aria-label': 'Provenance statement' }, 'Reading…');
  const panel = h('details', { id: 'provenance' },
    h('summary', {}, 'Provenance record'),
    h('p', {}, link(`/v1/jobs/${encodeURIComponent(id)}/provenance`, 'The signed envelope (DSSE)'),
      ' — verify it with causeway provenance verify or the published key.'),
    body);
  let read = false;
  panel.addEventListener('toggle', () => {
    if (!panel.open || read) return;
    read = true;
    api(`/v1/jobs/${encodeURIComponent(id)}/provenance?format=statement`)
      .then((st) => { body.textContent = JSON.stringify(st, null, 2); })
      .catch((e) => { body.textContent = (e as Error).message; });
  });
  return panel;
}

export const jobPage: Page = async (params, _q, live) => {
  const id = params[0];
  let job: any;
  try {
    job = await api(`/v1/jobs/${encodeURIComponent(id)}`);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) {
      return [h('h1', {}, 'No such job'), h('p', { class: 'error', id: 'not-found' }, e.message)];
    }
    throw e;
  }
  const [ex, cps] = await Promise.all([
    api(`/v1/jobs/${encodeURIComponent(id)}/explain?forecast=false`).catch((e) => ({ error: e.message })),
    api(`/v1/jobs/${encodeURIComponent(id)}/checkpoints`).catch(() => ({ checkpoints: [] })),
  ]);
  const status = h('p', { role: 'status' });
  let cancel: Kid = null;
  if (ACTIVE.has(job.state)) {
    cancel = h('button', { class: 'danger', id: 'cancel' }, 'Cancel job');
    cancel.addEventListener('click', async () => {
      if (!(await confirmDialog(`Cancel ${job.name} (${job.id})? Its running attempt is stopped.`, 'Cancel job'))) return;
      try {
        await api(`/v1/jobs/${encodeURIComponent(id)}/cancel`, 'POST', {});
        location.reload();
      } catch (e) {
        status.textContent = `Not cancelled: ${(e as Error).message}`;
        status.className = 'error';
      }
    });
  }
  if (ACTIVE.has(job.state)) {
    live(async () => {
      const now = await api(`/v1/jobs/${encodeURIComponent(id)}`);
      if (now.state !== job.state || (now.attempts ?? []).length !== (job.attempts ?? []).length) location.reload();
    }, 5000);
  }
  return [
    h('h1', {}, job.name, ' ', stateBadge(job.state)),
    kv([['Job', job.id], ['Team', job.team], ['Owner', job.owner], ['Cluster', job.cluster || '—'],
        ['Priority', job.priority], ['Submitted', when(job.created_at)], ['Updated', when(job.updated_at)],
        ['Cost', money(job.cost_micros)], ['Reason', job.reason || '—']]),
    cancel, status,
    ex.error ? h('p', { class: 'muted' }, `Explain: ${ex.error}`) : explainPanel(ex),
    attemptsPanel(job),
    h('section', {}, h('h2', {}, 'Checkpoints'),
      table('Checkpoints registered', ['Path', 'Step', 'Registered'],
        (cps.checkpoints ?? []).map((c: any) => [c.path ?? c.uri, c.step ?? '—', when(c.created_at ?? c.time)]))),
    await logsPanel(job, live),
    h('details', {}, h('summary', {}, 'Job spec'), h('pre', {}, job.spec_yaml ?? JSON.stringify(job.spec, null, 2))),
    provenancePanel(job.id),
  ];
};
