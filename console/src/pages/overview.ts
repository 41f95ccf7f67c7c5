// Queues, cost, GPUs and waste, readiness, people: each a read of the API
// the CLI also uses, shown as tables with a chart where a picture helps.
import { api, qs } from '../api';
import { h, kv, link, table, when, type Kid } from '../dom';
import { quotaBar, stackedBars } from '../charts';
import type { Page } from '../main';

const num = (s: unknown) => Number(s ?? 0) || 0;
// An exact decimal from the API, shown to `places` (the API keeps the exact value; the CSV does too).
const dec = (s: unknown, places = 2) => (s === null || s === undefined || s === '' ? '—' : num(s).toFixed(places));

export const queuesPage: Page = async (_p, _q, live) => {
  const holder = h('div', { 'aria-live': 'polite' });
  const load = async () => {
    const data = await api('/v1/queues');
    holder.replaceChildren(...(data.queues as any[]).map((q) => h('section', { class: 'panel' },
      h('h2', {}, `Queue ${q.name}`),
      kv([['Team', q.team], ['Cohort', q.cohort || '—'], ['Weight', q.weight], ['Running', q.running], ['Pending', q.pending],
          ['Budget', q.budget ? `${q.budget.spent} of ${q.budget.monthly} ${q.budget.currency} this month${q.budget.exhausted ? ' (exhausted)' : ''}` : 'none'],
          ['Pending jobs', link(`#/queues/${encodeURIComponent(q.name)}`, `the ${q.pending} waiting, in the order they will be tried`)]]),
      table(`Quota of ${q.name} per flavor (GPUs or CPUs)`, ['Flavor', '#Nominal', '#Used', '#Borrowed', 'Use'],
        (q.flavors as any[]).map((f) => [f.flavor, f.nominal, f.used, f.borrowing,
                                         quotaBar(`${q.name} ${f.flavor}`, f.nominal, f.used, f.borrowing)])))));
  };
  await load();
  live(load, 5000);
  return [h('h1', {}, 'Queues'), h('p', { class: 'muted' }, 'Blue: used within the nominal quota; orange: borrowed from the cohort.'), holder,
          queueHistory()];
};

// How long jobs waited and how often they were preempted, day by day: read
// from the ledger after the page is drawn (it reads two weeks of attempts).
function queueHistory(): HTMLElement {
  const out = h('section', { class: 'panel', id: 'queue-history', 'aria-live': 'polite' },
    h('h2', {}, 'The last 14 days'), h('p', { class: 'muted' }, 'Reading the ledger…'));
  api('/v1/queues/history?days=14').then((r) => {
    const rows: any[] = r.rows;
    const days = [...new Set(rows.map((x) => x.day))].sort();
    const teams = [...new Set(rows.map((x) => x.team))].sort();
    const minutes = (s: number) => (s / 60).toFixed(1);
    out.replaceChildren(h('h2', {}, 'The last 14 days'),
      stackedBars('Preempted attempts per day, stacked by team', days, teams,
                  (d, t) => num(rows.find((x) => x.day === d && x.team === t)?.preemptions)),
      table('Per day and team: jobs started, how long they had waited, attempts preempted',
        ['Day', 'Team', '#Started', '#Wait p50 (min)', '#Wait p95 (min)', '#Preempted'],
        rows.map((x) => [x.day, x.team, x.started, minutes(x.wait_p50_seconds), minutes(x.wait_p95_seconds), x.preemptions])));
  }).catch((e) => { out.replaceChildren(h('h2', {}, 'The last 14 days'), h('p', { class: 'error' }, (e as Error).message)); });
  return out;
}

// A queue's waiting jobs in the order the scheduler tries them (priority,
// then age), with their positions, a page at a time.
export const queuePage: Page = async (params, q, live) => {
  const name = params[0];
  const offset = Math.max(0, Number(q.get('offset') ?? 0) || 0);
  const holder = h('div', { 'aria-live': 'polite' });
  const pager = h('div', { class: 'pager' });
  const load = async () => {
    const data = await api(`/v1/queues/${encodeURIComponent(name)}/jobs${qs({ offset, limit: 50 })}`);
    holder.replaceChildren(
      h('p', {}, `${data.queued} waiting.`),
      table(`Waiting in ${name}, in admission order (1 is tried next)`, ['#Position', 'Job', 'Owner', '#Priority', 'Submitted'],
        (data.jobs as any[]).map((j) => [j.position, link(`#/jobs/${encodeURIComponent(j.id)}`, j.name ?? j.id), j.owner ?? '—',
                                         j.priority, when(j.submitted_at)])));
    const to = (o: number) => `#/queues/${encodeURIComponent(name)}${qs({ offset: o || undefined })}`;
    pager.replaceChildren(offset > 0 ? link(to(Math.max(0, offset - 50)), 'Earlier positions') : '',
                          offset + 50 < data.queued ? link(to(offset + 50), 'Later positions') : '');
  };
  await load();
  live(load, 5000);
  return [h('h1', {}, `Queue ${name}`), holder, pager];
};

function monthsBack(n: number): string {
  const d = new Date();
  const from = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - (n - 1), 1));
  const to = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
  return `${from.toISOString().slice(0, 10)}..${to.toISOString().slice(0, 10)}`;
}

function csvCell(v: unknown): string {
  const s = String(v ?? '');
  // Quoted, and a leading formula character neutralised for spreadsheets.
  return `"${(/^[=+\-@]/.test(s) ? "'" + s : s).replace(/"/g, '""')}"`;
}

export const costPage: Page = async (_p, q) => {
  const period = q.get('period') || monthsBack(12);
  const [metered, byProvider, waste] = await Promise.all([
    api(`/v1/cost/showback${qs({ source: 'metered', by: 'team,month', period })}`),
    api(`/v1/cost/showback${qs({ source: 'metered', by: 'provider', period })}`),
    api(`/v1/cost/waste${qs({ period })}`),
  ]);
  const rows: any[] = metered.rows;
  const months = [...new Set(rows.map((r) => r.month))].sort();
  const teams = [...new Set(rows.map((r) => r.team))].sort();
  const total = rows.reduce((t, r) => t + num(r.cost), 0);
  const completed = rows.reduce((t, r) => t + num(r.completed_jobs), 0);
  const wasted = rows.reduce((t, r) => t + num(r.wasted_cost), 0);
  const header = ['team', 'month', 'attempts', 'gpu_hours', 'cost', 'completed_jobs', 'cost_per_completed_job', 'wasted_cost'];
  const csv = [header.join(','), ...rows.map((r) => header.map((k) => csvCell(r[k])).join(','))].join('\n') + '\n';
  const download = h('a', { href: URL.createObjectURL(new Blob([csv], { type: 'text/csv' })), download: `showback-${period}.csv`, id: 'csv' },
                     'Download CSV of this table');
  const form = h('form', { class: 'filters', 'aria-label': 'Period' },
    h('label', {}, 'Period (2026-11, or FROM..TO days)', h('input', { name: 'period', value: period, size: 26 })),
    h('button', { type: 'submit' }, 'Show'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    location.hash = '#/cost' + qs({ period: String(new FormData(form).get('period') ?? '') });
  });
  return [
    h('h1', {}, 'Cost'), form,
    h('div', { class: 'cards' },
      h('div', { class: 'card' }, h('div', {}, 'Total'), h('div', { class: 'v', id: 'cost-total' }, `${total.toFixed(2)} ${metered.currency}`)),
      h('div', { class: 'card' }, h('div', {}, 'Completed jobs'), h('div', { class: 'v' }, completed)),
      h('div', { class: 'card' }, h('div', {}, 'Per completed job'), h('div', { class: 'v' }, completed ? (total / completed).toFixed(2) : '—')),
      h('div', { class: 'card' }, h('div', {}, 'Failed or preempted attempts'), h('div', { class: 'v' }, wasted.toFixed(2)))),
    h('h2', {}, 'Showback by team and month'),
    stackedBars(`Cost in ${metered.currency} by month, stacked by team`, months, teams,
                (m, t) => num(rows.find((r) => r.month === m && r.team === t)?.cost)),
    table('What each team spent per month, at the estate\'s prices', ['Team', 'Month', '#Attempts', '#GPU-hours', '#Cost', '#Completed', '#Per completed job', '#Wasted'],
      rows.map((r) => [r.team, r.month, r.attempts, dec(r.gpu_hours, 1), dec(r.cost), r.completed_jobs, dec(r.cost_per_completed_job), dec(r.wasted_cost)])),
    download,
    h('h2', {}, 'Cost per completed job over time'),
    stackedBars(`Cost per completed job in ${metered.currency}, by month`, months, ['per completed job'], (m) => {
      const inMonth = rows.filter((r) => r.month === m);
      const n = inMonth.reduce((t, r) => t + num(r.completed_jobs), 0);
      return n ? inMonth.reduce((t, r) => t + num(r.cost), 0) / n : 0;
    }),
    h('h2', {}, 'Providers compared'),
    table('Cost and cost per completed job by provider', ['Provider', '#GPU-hours', '#Cost', '#Completed', '#Per completed job', '#Wasted'],
      (byProvider.rows as any[]).map((r) => [r.provider, dec(r.gpu_hours, 1), dec(r.cost), r.completed_jobs, dec(r.cost_per_completed_job), dec(r.wasted_cost)])),
    h('h2', {}, 'Waste'),
    table('Failed attempts and idle time reaped, by team', ['Team', '#Failed attempts', '#Failed cost', '#Reaped jobs', '#Idle GPU-hours', '#Idle cost', '#Unused reserved share'],
      (waste.teams as any[]).map((t) => [t.team, t.failed_attempts, dec(t.failed_cost), t.reaped_jobs, dec(t.idle_gpu_hours, 1), dec(t.idle_cost), dec(t.unused_reserved_share)])),
    table('Reservations: committed against used', ['Cluster', 'GPU', '#Reserved GPU-hours', '#Used GPU-hours', '#Committed', '#Unused'],
      (waste.reservations as any[]).map((r) => [r.cluster, r.gpu_type, dec(r.reserved_gpu_hours, 1), dec(r.used_gpu_hours, 1), dec(r.committed_cost), dec(r.unused_cost)])),
  ];
};

function auditRows(events: any[]): Kid[][] {
  return events.map((e) => [when(new Date(e.time).toISOString()), e.actor?.user?.name ?? '—', e.api?.operation ?? e.message ?? '—',
                            e.cloud?.provider ?? '—', e.message ?? '']);
}

export const gpusPage: Page = async (_p, _q, live) => {
  const holder = h('div', { 'aria-live': 'polite' });
  const load = async () => {
    const [running, reaper, waste] = await Promise.all([
      api('/v1/jobs?state=running&limit=100').catch((e) => ({ error: e.message, jobs: [] })),
      // The trail's own events, filtered by the store on the action prefix.
      api('/v1/audit?action=reaper.&order=newest&limit=100').catch((e) => ({ error: e.message, events: [] })),
      api(`/v1/cost/waste${qs({ period: monthsBack(1) })}`).catch((e) => ({ error: e.message, teams: [] })),
    ]);
    const reclaimed = (waste.teams as any[]).reduce((t, x) => t + num(x.idle_cost), 0);
    // Idle now: the reaper's last word on the job is a warning (not a
    // recovery or a cancel) and the job still runs.
    const last = new Map<string, any>();
    for (const e of reaper.events as any[]) if (!last.has(e.resource)) last.set(e.resource, e);
    const warned = [...last.values()].filter((e) => e.action === 'reaper.warn' && String(e.resource).startsWith('job/')).slice(0, 20);
    const idle = (await Promise.all(warned.map(async (e) => {
      const job = await api(`/v1/jobs/${encodeURIComponent(String(e.resource).slice(4))}`).catch(() => null);
      return job?.state === 'running' ? [e, job] : null;
    }))).filter(Boolean) as [any, any][];
    const idleNow = table('Idle now: warned by the reaper and not busy since', ['Job', 'Team', 'Owner', 'Idle since', '#GPUs', '#Busiest GPU in the window (%)', 'Policy'],
      idle.map(([e, j]) => [link(`#/jobs/${encodeURIComponent(j.id)}`, j.name), j.team, j.owner, when(e.time),
                            e.details?.gpus ?? '—', e.details?.max_percent ?? '—', e.details?.policy ?? '—']));
    idleNow.id = 'idle-now';
    holder.replaceChildren(
      h('div', { class: 'cards' },
        h('div', { class: 'card' }, h('div', {}, 'Running jobs'), h('div', { class: 'v' }, running.jobs.length)),
        h('div', { class: 'card' }, h('div', {}, 'Idle now'), h('div', { class: 'v' }, idle.length)),
        h('div', { class: 'card' }, h('div', {}, 'Idle cost reaped this month'), h('div', { class: 'v' }, reclaimed.toFixed(2)))),
      idleNow,
      table('Running now', ['Job', 'Team', 'Cluster'],
        (running.jobs as any[]).map((j) => [link(`#/jobs/${encodeURIComponent(j.id)}`, j.name), j.team, j.cluster])),
      h('h2', {}, 'Reaper warnings and cancellations'),
      reaper.error ? h('p', { class: 'muted' }, reaper.error)
        : table('Idle GPU reaper: warnings and cancellations, newest first', ['Time', 'Action', 'Job', 'Why'],
                (reaper.events as any[]).map((e) => [when(e.time), e.action,
                  String(e.resource).startsWith('job/') ? link(`#/jobs/${encodeURIComponent(String(e.resource).slice(4))}`, String(e.resource).slice(4)) : e.resource,
                  `${e.details?.dry_run ? '(dry run) ' : ''}${e.details?.reason ?? ''}`])));
  };
  await load();
  live(load, 10000);
  return [h('h1', {}, 'GPUs and waste'), holder];
};

export const auditPage: Page = async (_p, q) => {
  const f = { actor: q.get('actor') ?? '', action: q.get('action') ?? '', provider: q.get('provider') ?? '',
              since: q.get('since') ?? '', until: q.get('until') ?? '', cursor: q.get('cursor') ?? '' };
  const input = (name: keyof typeof f, label: string) =>
    h('label', {}, label, h('input', { name, value: f[name], size: 16, autocomplete: 'off' }));
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Search the audit trail' },
    input('actor', 'Person or actor'), input('action', 'Action (or prefix.)'), input('provider', 'Provider'),
    input('since', 'Since (24h, RFC 3339)'), input('until', 'Until'), h('button', { type: 'submit' }, 'Search'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const d = new FormData(form);
    location.hash = '#/audit' + qs(Object.fromEntries([...d.entries()].map(([k, v]) => [k, String(v)])));
  });
  const [found, coverage] = await Promise.all([
    api(`/v1/audit/search${qs({ ...f, order: 'newest', limit: 50 })}`),
    api('/v1/audit/coverage').catch((e) => ({ error: e.message, findings: [] })),
  ]);
  // Verifying reads the whole chain, which takes longer than the rest of
  // the page: it is filled in when it comes.
  // (The server reuses a report for 30 s; "Verify again now" reads the chain afresh.)
  const chain = h('div', { id: 'chain', 'aria-live': 'polite' });
  const verify = (fresh: boolean) => {
    chain.replaceChildren(h('p', { class: 'muted' }, 'Verifying the chain…'));
    api(`/v1/audit/verify${qs({ fresh: fresh ? 'true' : undefined })}`).then((v) => {
      const again = h('button', { type: 'button', id: 'verify-again' }, 'Verify again now');
      again.addEventListener('click', () => verify(true));
      chain.replaceChildren(kv(Object.entries(v).filter(([, x]) => typeof x !== 'object').map(([k, x]) => [k, String(x)])), again);
    }).catch((e) => { chain.replaceChildren(h('p', { class: 'error' }, (e as Error).message)); });
  };
  verify(false);
  return [
    h('h1', {}, 'Audit'),
    h('section', { class: 'panel' }, h('h2', {}, 'Chain'), chain),
    form,
    f.actor ? h('p', {}, link(`#/audit/people/${encodeURIComponent(f.actor)}`, `${f.actor}'s page`)) : null,
    table('Events across Causeway and the providers, newest first', ['Time', 'Actor', 'Action', 'Provider', 'Message'], auditRows(found.events)),
    found.next_cursor ? link('#/audit' + qs({ ...f, cursor: found.next_cursor }), 'Older events') : null,
    h('h2', {}, 'Coverage findings'),
    table('What the audit trail does not cover', ['Finding'],
      (coverage.findings as any[]).map((x) => [x.message ?? x.reason ?? JSON.stringify(x)])),
  ];
};

export const personPage: Page = async (params) => {
  const user = params[0];
  const [person, creds] = await Promise.all([
    api(`/v1/audit/people/${encodeURIComponent(user)}`),
    api(`/v1/people/${encodeURIComponent(user)}/credentials`).catch((e) => ({ error: e.message })),
  ]);
  const events: any[] = person.events ?? [];
  return [
    h('h1', {}, user),
    h('h2', {}, 'Credentials and grants'),
    creds.error ? h('p', { class: 'muted' }, creds.error) : h('pre', {}, JSON.stringify(creds, null, 2)),
    h('h2', {}, 'What they did, where'),
    table(`Events by ${user}`, ['Time', 'Actor', 'Action', 'Provider', 'Message'], auditRows(events)),
  ];
};

export const readinessPage: Page = async () => {
  const [r, questions, runs] = await Promise.all([
    api('/v1/readiness'),
    api('/v1/readiness/questions').catch((e) => ({ error: e.message })),
    api('/v1/acceptance/runs').catch((e) => ({ error: e.message, runs: [] })),
  ]);
  return [
    h('h1', {}, 'Readiness'),
    h('p', { class: 'muted' }, `Evaluated ${when(r.at)}`),
    table('Controls per provider', ['Control', 'Provider', 'State', 'Owner', 'Why'],
      (r.findings as any[]).map((f) => [f.control, f.provider, f.state, f.owner ?? '—', f.reason])),
    h('h2', {}, 'The four questions'),
    questions.error ? h('p', { class: 'muted' }, questions.error) : h('pre', {}, JSON.stringify(questions, null, 2)),
    h('h2', {}, 'Acceptance tests'),
    table('Recorded acceptance runs', ['Run', 'Verdict'],
      ((runs.runs ?? []) as any[]).map((x) => [x.id ?? x.name ?? '—', x.verdict ?? x.state ?? JSON.stringify(x)])),
  ];
};

export const peoplePage: Page = async () => {
  const data = await api('/v1/breakglass');
  const status = h('p', { role: 'status' });
  const rows = (data.breakglass as any[]).map((g) => {
    const approve = g.state === 'requested' ? h('button', {}, 'Approve') : null;
    approve?.addEventListener('click', async () => {
      try {
        await api(`/v1/breakglass/${encodeURIComponent(g.id)}/approve`, 'POST', {});
        location.reload();
      } catch (e) {
        status.textContent = `Not approved: ${(e as Error).message}`;
      }
    });
    return [g.id, g.requester ?? g.user, g.role, g.reason, g.state, approve];
  });
  return [h('h1', {}, 'People'), h('h2', {}, 'Break-glass requests'), status,
          table('Requests for time-boxed elevation, with their reasons', ['Request', 'Person', 'Role', 'Reason', 'State', 'Action'], rows)];
};
