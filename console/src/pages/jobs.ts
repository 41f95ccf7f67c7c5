// Jobs: the list (filters, paging, refreshed while open) and a job's page:
// why it is here or still pending, its attempts on a timeline, what each
// cost (and what went to attempts that did not finish), checkpoints, logs
// (followed while it runs), its provenance, and cancel where allowed.
import { api, ApiError, qs } from '../api';
import { amount, confirmDialog, h, kv, link, money, span, stateBadge, table, when, type Kid } from '../dom';
import { timeline } from '../charts';
import type { Page } from '../main';

const STATES = ['', 'pending', 'admitted', 'running', 'succeeded', 'failed', 'cancelled'];
const ACTIVE = new Set(['pending', 'admitted', 'running']);

function jobRows(jobs: any[], currency: string): Kid[][] {
  return jobs.map((j) => [
    link(`#/jobs/${encodeURIComponent(j.id)}`, j.name || j.id), j.team, j.owner, stateBadge(j.state),
    j.cluster || '—', money(j.cost_micros, currency), when(j.created_at),
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
                                 jobRows(data.jobs, data.currency ?? 'USD'), 'No jobs match.'));
    pager.replaceChildren(
      params.cursor ? link('#/jobs' + qs({ ...params, cursor: '', limit: undefined }), 'Newest') : '',
      data.next_cursor ? link('#/jobs' + qs({ ...params, cursor: data.next_cursor, limit: undefined }), 'Older jobs') : '');
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
      ? `Expected start: ${when(e.start)} (in about ${span(e.start_in_seconds)}, ± ${span(e.precision_seconds)}) ` +
        `on ${e.placement?.cluster ?? '?'}, expected cost ${amount(e.expected_cost?.amount, e.expected_cost?.currency ?? '')}.${pos}`
      : `Not expected to start within the planning horizon: ${e.waiting ?? ''}.${pos}`;
  }).catch((err) => { p.textContent = `Expected start: ${(err as Error).message}`; });
  return p;
}

function explainPanel(ex: any, job: any): Kid {
  const sched = ex.scheduler ?? {};
  const cands: any[] = sched.candidates ?? [];
  const waiting = ex.state === 'pending' || ex.state === 'admitted';
  const forecast = ex.state === 'pending' ? expectedStart(ex.job) : null;
  // A job that ran keeps why it went where it did: its last attempt's placement.
  const attempts: any[] = job.attempts ?? [];
  const placed = attempts.length ? attempts[attempts.length - 1].placement?.why : '';
  const why = waiting ? ex.reason || sched.reason || sched.waiting : placed || sched.placement?.why || ex.reason;
  const currency = job.currency ?? 'USD';
  return h('section', { 'aria-labelledby': 'why' },
    h('h2', { id: 'why' }, waiting ? 'Why pending' : 'Why here'),
    h('p', { id: 'why-text' }, why || '—'),
    forecast,
    sched.queue ? h('p', { class: 'muted' }, 'Queue ', link(`#/queues/${encodeURIComponent(sched.queue)}`, sched.queue)) : null,
    cands.length ? table('Candidate clusters the scheduler weighed', ['Cluster', 'Accelerators', 'Eligible', 'Why / price'],
      cands.map((c) => [link(`#/gpus?cluster=${encodeURIComponent(c.cluster)}`, c.cluster), c.accelerators, c.eligible ? 'yes' : 'no',
                        c.eligible ? `${amount(c.price_per_gpu_hour, currency)} per GPU-hour${c.reserved ? ' (reserved)' : ''}` : c.reason]))
      : null);
}

// What happened to the job, in order: each event the ledger kept (submitted,
// placed, preempted by whom, reaped for idleness, timed out, cancelled by
// whom, resumed from which checkpoint).
const BAD = /(fail|preempt|cancel|reap|timed? ?out|lost|outage|error)/i;
const GOOD = /(succeed|complet|resum)/i;
function storyPanel(job: any): Kid {
  const events: any[] = job.events ?? [];
  if (events.length === 0) return null;
  return h('section', { 'aria-labelledby': 'story' },
    h('h2', { id: 'story' }, 'What happened'),
    h('ol', { class: 'events', id: 'events' }, events.map((e) => {
      const text = `${e.type}: ${e.message ?? ''}`;
      return h('li', { class: BAD.test(text) ? 'bad' : GOOD.test(text) ? 'good' : undefined },
        h('time', { datetime: e.time }, when(e.time)), h('strong', {}, e.type), ' ', e.message ?? '');
    })));
}

function attemptsPanel(job: any): Kid {
  const attempts: any[] = job.attempts ?? [];
  if (attempts.length === 0) return h('section', {}, h('h2', {}, 'Attempts'), h('p', { class: 'muted' }, 'Not started yet.'));
  const now = Date.now();
  const wasted = attempts.filter((a) => a.state !== 'succeeded' && a.state !== 'running')
                         .reduce((t, a) => t + (a.cost_micros ?? 0), 0);
  const currency = job.currency ?? 'USD';
  return h('section', { 'aria-labelledby': 'attempts' },
    h('h2', { id: 'attempts' }, 'Attempts'),
    timeline(`Attempts of ${job.name}`, attempts.map((a) => ({
      label: `#${a.number} ${a.cluster}`.slice(0, 14), state: a.state,
      start: Date.parse(a.started_at), end: a.ended_at ? Date.parse(a.ended_at) : now }))),
    table('Each attempt and what it cost', ['#', 'Cluster', 'State', 'Started', 'Ended', '#GPUs', '#Cost', 'Failure'],
      attempts.map((a) => [a.number, link(`#/gpus?cluster=${encodeURIComponent(a.cluster)}`, a.cluster), stateBadge(a.state),
                           when(a.started_at), when(a.ended_at), a.gpus, money(a.cost_micros, currency), a.failure_class || '—'])),
    h('p', { id: 'wasted' }, `Spent on attempts that did not finish: ${money(wasted, currency)}`));
}

async function logsPanel(job: any, live: (fn: () => Promise<void>, ms: number) => void): Promise<Kid> {
  const pre = h('pre', { class: 'logs', tabindex: 0, 'aria-label': 'Log output' });
  let offset = 0;
  let kept = true;
  const follow = async () => {
    if (!kept) return;
    try {
      // missing=empty: a backend that keeps no output answers 204 and says why.
      const r = await fetch(`/v1/jobs/${encodeURIComponent(job.id)}/logs${qs({ offset, missing: 'empty' })}`, { credentials: 'same-origin' });
      if (r.status === 204) {
        kept = false;
        pre.textContent = r.headers.get('X-Causeway-Logs-Missing') ?? 'No output is kept for this job.';
        return;
      }
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
  if (job.state === 'running' && kept) live(follow, 3000);
  return h('section', {}, h('h2', {}, 'Logs'), pre);
}

// The job's provenance record (an in-toto Statement), read when opened: a
// summary of what it pins (subjects, builder, what the run depended on),
// the full record behind its own toggle, and the signed DSSE envelope one
// link away for anyone who wants to verify it.
function provenanceSummary(st: any): Kid {
  const subjects: any[] = st.subject ?? [];
  const pred = st.predicate ?? {};
  const build = pred.buildDefinition ?? {};
  const run = pred.runDetails ?? {};
  const deps: any[] = build.resolvedDependencies ?? [];
  const digest = (d: any) => Object.entries(d ?? {}).map(([k, v]) => `${k}:${String(v).slice(0, 16)}…`).join(', ');
  return [
    kv([['Type', st.predicateType ?? '—'], ['Build type', build.buildType ?? '—'], ['Builder', run.builder?.id ?? '—'],
        ['Invocation', run.metadata?.invocationId ?? '—'], ['Started', when(run.metadata?.startedOn)],
        ['Finished', when(run.metadata?.finishedOn)]]),
    table('What it produced', ['Name', 'Digest'], subjects.map((x) => [x.name ?? '—', digest(x.digest)])),
    table('What the run depended on (image, datasets, code, checkpoint)', ['Name', 'Where', 'Digest'],
      deps.map((d) => [d.name ?? '—', d.uri ?? '—', digest(d.digest)])),
  ];
}

function provenancePanel(id: string): HTMLElement {
  const body = h('div', { id: 'provenance-body' }, h('p', { class: 'muted' }, 'Reading…'));
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
      .then((st) => {
        const full = h('pre', { tabindex: 0, 'aria-label': 'Provenance statement' }, JSON.stringify(st, null, 2));
        body.replaceChildren(h('div', { id: 'provenance-summary' }, provenanceSummary(st) as any),
                             h('details', { id: 'provenance-full' }, h('summary', {}, 'The full record'), full));
      })
      .catch((e) => { body.replaceChildren(h('p', { class: 'error' }, (e as Error).message)); });
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
  const queue = ex.scheduler?.queue;
  return [
    h('h1', {}, job.name, ' ', stateBadge(job.state)),
    kv([['Job', job.id], ['Team', link(`#/jobs?team=${encodeURIComponent(job.team)}`, job.team)], ['Owner', job.owner],
        ['Queue', queue ? link(`#/queues/${encodeURIComponent(queue)}`, queue) : '—'],
        ['Cluster', job.cluster ? link(`#/gpus?cluster=${encodeURIComponent(job.cluster)}`, job.cluster) : '—'],
        ['Priority', job.priority], ['Submitted', when(job.created_at)], ['Updated', when(job.updated_at)],
        ['Cost', h('span', { id: 'job-cost' }, money(job.cost_micros, job.currency ?? 'USD'))], ['Reason', job.reason || '—']]),
    cancel, status,
    ex.error ? h('p', { class: 'muted' }, `Explain: ${ex.error}`) : explainPanel(ex, job),
    storyPanel(job),
    attemptsPanel(job),
    h('section', {}, h('h2', {}, 'Checkpoints'),
      table('Checkpoints registered', ['Path', 'Step', 'Registered'],
        (cps.checkpoints ?? []).map((c: any) => [c.path ?? c.uri, c.step ?? '—', when(c.created_at ?? c.time)]))),
    await logsPanel(job, live),
    h('details', {}, h('summary', {}, 'Job spec'), h('pre', {}, job.spec_yaml ?? JSON.stringify(job.spec, null, 2))),
    provenancePanel(job.id),
  ];
};
