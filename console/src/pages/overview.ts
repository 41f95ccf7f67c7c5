// Queues, cost, GPUs and waste, readiness, people: each a read of the API
// the CLI also uses, shown as tables with a chart where a picture helps.
import { api, qs } from '../api';
import { amount, fmt, h, kv, link, ownerText, span, table, unreadable, when, type Kid } from '../dom';
import { lineChart, quotaBar, stackedBars } from '../charts';
import type { Page } from '../main';

const num = (s: unknown) => Number(s ?? 0) || 0;
// An exact decimal from the API, shown to `places` with thousands
// separators (the API keeps the exact value; the CSV does too).
const dec = (s: unknown, places = 2) => fmt(s, places);

export const queuesPage: Page = async (_p, _q, live) => {
  const holder = h('div', { 'aria-live': 'polite' });
  const load = async () => {
    const data = await api('/v1/queues');
    holder.replaceChildren(...(data.queues as any[]).map((q) => h('section', { class: 'panel' },
      h('h2', {}, `Queue ${q.name}`),
      kv([['Team', q.team], ['Cohort', q.cohort || '—'], ['Weight', q.weight], ['Running', q.running], ['Pending', q.pending],
          ['Budget', q.budget ? `${amount(q.budget.spent, q.budget.currency)} of ${amount(q.budget.monthly, q.budget.currency)} this month${q.budget.exhausted ? ' (exhausted)' : ''}` : 'none'],
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
    const minutes = (s: number) => fmt(s / 60, 1);
    if (rows.length === 0) {
      out.replaceChildren(h('h2', {}, 'The last 14 days'), h('p', { class: 'muted' }, 'No job started in the last 14 days.'));
      return;
    }
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
  const [metered, byProvider, waste, billsByProvider, billsByTeam] = await Promise.all([
    api(`/v1/cost/showback${qs({ source: 'metered', by: 'team,month', period })}`),
    api(`/v1/cost/showback${qs({ source: 'metered', by: 'provider', period })}`),
    api(`/v1/cost/waste${qs({ period })}`),
    // What the providers billed (imported FOCUS files), beside what Causeway metered.
    api(`/v1/cost/showback${qs({ by: 'provider', period })}`).catch((e) => ({ error: e })),
    api(`/v1/cost/showback${qs({ by: 'team', period, share: 'proportional' })}`).catch((e) => ({ error: e })),
  ]);
  const cur: string = metered.currency;
  const rows: any[] = metered.rows;
  const months = [...new Set(rows.map((r) => r.month))].sort();
  const teams = [...new Set(rows.map((r) => r.team))].sort();
  const total = rows.reduce((t, r) => t + num(r.cost), 0);
  const completed = rows.reduce((t, r) => t + num(r.completed_jobs), 0);
  const wasted = rows.reduce((t, r) => t + num(r.wasted_cost), 0);
  const reservations: any[] = waste.reservations ?? [];
  const committed = reservations.reduce((t, r) => t + num(r.committed_cost), 0);
  const unused = reservations.reduce((t, r) => t + num(r.unused_cost), 0);
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
  const card = (label: string, value: Kid, id?: string) =>
    h('div', { class: 'card' }, h('div', {}, label), h('div', { class: 'v', id }, value));
  const billed = (r: any) => amount(r.billed_cost, r.currency ?? cur);
  const bills = (billsByProvider as any).error
    ? unreadable('the imported bills', (billsByProvider as any).error)
    : (billsByProvider.rows as any[]).length === 0
      ? h('p', { class: 'muted', id: 'no-bills' }, 'No provider bill has been imported for this period (causeway cost import FILE --provider P, FOCUS 1.0–1.2).')
      : [table('What each provider billed (FOCUS), against what Causeway metered', ['Provider', '#Billed', '#Effective', '#GPU-hours billed', '#Metered'],
               (billsByProvider.rows as any[]).map((r) => [r.provider, billed(r), amount(r.effective_cost, r.currency ?? cur),
                 dec(r.gpu_hours, 1), amount((byProvider.rows as any[]).find((m) => m.provider === r.provider)?.cost, cur)])),
         (billsByTeam as any).error ? null
           : table('Billed cost by team: tagged, untagged, and the untagged share spread in proportion', ['Team', '#Effective', '#Shared untagged', '#Total'],
                   (billsByTeam.rows as any[]).map((r) => [r.team || 'untagged', amount(r.effective_cost, r.currency ?? cur),
                     amount(r.shared_cost, r.currency ?? cur), amount(r.total_effective_cost ?? r.effective_cost, r.currency ?? cur)]))];
  const nothing = rows.length === 0;
  return [
    h('h1', {}, 'Cost'), form,
    h('div', { class: 'cards' },
      card('Total metered', amount(total, cur), 'cost-total'),
      card('Completed jobs', fmt(completed, 0)),
      card('Per completed job', completed ? amount(total / completed, cur) : '—'),
      card('Failed or preempted attempts', amount(wasted, cur)),
      card('Reservations committed', amount(committed, cur), 'committed'),
      card('Reserved but unused', amount(unused, cur))),
    h('h2', {}, 'Showback by team and month'),
    nothing ? h('p', { class: 'muted', id: 'no-cost' }, `No attempt was metered in ${period}.`)
      : stackedBars(`Cost in ${cur} by month, stacked by team`, months, teams,
                    (m, t) => num(rows.find((r) => r.month === m && r.team === t)?.cost)),
    table('What each team spent per month, at the estate\'s prices', ['Team', 'Month', '#Attempts', '#GPU-hours', '#Cost', '#Completed', '#Per completed job', '#Wasted'],
      rows.map((r) => [r.team, r.month, fmt(r.attempts, 0), dec(r.gpu_hours, 1), amount(r.cost, cur), fmt(r.completed_jobs, 0),
                       amount(r.cost_per_completed_job, cur), amount(r.wasted_cost, cur)]), `Nothing metered in ${period}.`),
    nothing ? null : download,
    h('h2', {}, 'Cost per completed job over time'),
    nothing ? h('p', { class: 'muted' }, 'No completed job yet.')
      : stackedBars(`Cost per completed job in ${cur}, by month`, months, ['per completed job'], (m) => {
        const inMonth = rows.filter((r) => r.month === m);
        const n = inMonth.reduce((t, r) => t + num(r.completed_jobs), 0);
        return n ? inMonth.reduce((t, r) => t + num(r.cost), 0) / n : 0;
      }),
    h('h2', {}, 'Providers compared'),
    table('Cost and cost per completed job by provider', ['Provider', '#GPU-hours', '#Cost', '#Completed', '#Per completed job', '#Wasted'],
      (byProvider.rows as any[]).map((r) => [r.provider, dec(r.gpu_hours, 1), amount(r.cost, cur), fmt(r.completed_jobs, 0),
                                             amount(r.cost_per_completed_job, cur), amount(r.wasted_cost, cur)])),
    h('h2', {}, 'Provider bills'),
    h('div', { id: 'bills' }, bills),
    h('h2', {}, 'Waste'),
    table('Failed attempts and idle time reaped, by team', ['Team', '#Failed attempts', '#Failed cost', '#Reaped jobs', '#Idle GPU-hours', '#Idle cost', '#Unused reserved share'],
      (waste.teams as any[]).map((t) => [t.team, fmt(t.failed_attempts, 0), amount(t.failed_cost, cur), fmt(t.reaped_jobs, 0),
                                         dec(t.idle_gpu_hours, 1), amount(t.idle_cost, cur), amount(t.unused_reserved_share, cur)])),
    table('Reservations: committed against used', ['Cluster', 'GPU', '#Reserved GPU-hours', '#Used GPU-hours', '#Committed', '#Unused'],
      reservations.map((r) => [r.cluster, r.gpu_type, dec(r.reserved_gpu_hours, 1), dec(r.used_gpu_hours, 1),
                               amount(r.committed_cost, cur), amount(r.unused_cost, cur)]), 'The estate reserves nothing in this period.'),
  ];
};

function auditRows(events: any[]): Kid[][] {
  return events.map((e) => [when(new Date(e.time).toISOString()), e.actor?.user?.name ?? e.actor?.user?.uid ?? '—',
                            e.api?.operation ?? e.message ?? '—', e.cloud?.provider ?? '—', e.message ?? '']);
}

// GPUs: what each cluster and pool has, holds and leaves idle; what runs
// and at what rate; utilization day by day; the reaper's work.
export const gpusPage: Page = async (_p, q, live) => {
  const holder = h('div', { 'aria-live': 'polite' });
  const only = q.get('cluster') ?? '';
  const load = async () => {
    const [cap, reaper, waste] = await Promise.all([
      api('/v1/capacity').catch((e) => ({ error: e })),
      // The trail's own events, filtered by the store on the action prefix.
      api('/v1/audit?action=reaper.&order=newest&limit=100').catch((e) => ({ error: e, events: [] })),
      api(`/v1/cost/waste${qs({ period: monthsBack(1) })}`).catch((e) => ({ error: e, teams: [] })),
    ]);
    const cur: string = (cap as any).currency ?? (waste as any).currency ?? 'USD';
    const parts: Kid[] = [];
    if ((cap as any).error) {
      parts.push(unreadable('the clusters\' capacity', (cap as any).error));
    } else {
      const pools = (cap.pools as any[]).filter((p) => !only || p.cluster === only);
      const sum = (k: string) => pools.reduce((t, p) => t + num(p[k]), 0);
      const running: any[] = cap.running ?? [];
      const rate = running.reduce((t, j) => t + num(j.cost_per_hour), 0);
      parts.push(
        h('div', { class: 'cards' },
          h('div', { class: 'card' }, h('div', {}, 'GPUs'), h('div', { class: 'v', id: 'gpus-total' }, fmt(sum('gpus'), 0))),
          h('div', { class: 'card' }, h('div', {}, 'Allocated'), h('div', { class: 'v', id: 'gpus-allocated' }, fmt(sum('allocated'), 0))),
          h('div', { class: 'card' }, h('div', {}, 'Free'), h('div', { class: 'v' }, fmt(sum('free'), 0))),
          h('div', { class: 'card' }, h('div', {}, `Idle (below ${cap.idle_below_percent}%)`),
            h('div', { class: 'v' }, cap.telemetry ? fmt(sum('idle'), 0) : 'no telemetry')),
          h('div', { class: 'card' }, h('div', {}, 'Running now costs'), h('div', { class: 'v' }, `${amount(rate, cur)}/h`))),
        only ? h('p', {}, `Cluster ${only}. `, link('#/gpus', 'All clusters')) : null,
        table('GPUs per cluster and pool: allocated to running attempts, free, and idle by the GPU telemetry',
          ['Cluster', 'Pool', '#GPUs', '#Allocated', '#Free', '#Idle', '#Not sampled'],
          pools.map((p) => [link(`#/gpus?cluster=${encodeURIComponent(p.cluster)}`, p.cluster), p.pool, fmt(p.gpus, 0),
                            fmt(p.allocated, 0), fmt(p.free, 0), cap.telemetry ? fmt(p.idle, 0) : '—', fmt(p.unobserved, 0)])),
        h('h2', {}, 'GPU utilization, day by day'),
        (cap.days as any[]).some((d) => d.utilization_percent !== null)
          ? lineChart('Share of sampled GPU time busy, per day (UTC)',
                      (cap.days as any[]).map((d) => ({ label: d.day, value: d.utilization_percent })), 100, '%')
          : h('p', { class: 'muted' }, 'No GPU telemetry was recorded for attempts in the last 14 days.'),
        table('GPU time allocated and sampled per day', ['Day', '#Allocated GPU-hours', '#Sampled GPU-hours', '#Busy (%)'],
          (cap.days as any[]).map((d) => [d.day, dec(d.allocated_gpu_hours, 1), dec(d.observed_gpu_hours, 1),
                                          d.utilization_percent === null ? '—' : dec(d.utilization_percent, 1)])),
        h('h2', {}, 'Running now'),
        table('Running jobs: their GPUs, what they cost an hour, how busy their GPUs have been',
          ['Job', 'Team', 'Cluster', '#GPUs', '#Cost per hour', '#Busy (%)', 'Since'],
          running.filter((j) => !only || j.cluster === only).map((j) => [link(`#/jobs/${encodeURIComponent(j.id)}`, j.name || j.id), j.team,
            j.cluster, fmt(j.gpus, 0), amount(j.cost_per_hour, cur), j.utilization_percent === null ? '—' : dec(j.utilization_percent, 1),
            when(j.since)]), 'Nothing runs now.'));
    }
    // Idle now: the reaper's last word on the job is a warning (not a
    // recovery or a cancel) and the job still runs.
    const names = new Map<string, string>();
    const events: any[] = (reaper as any).events ?? [];
    const last = new Map<string, any>();
    for (const e of events) if (!last.has(e.resource)) last.set(e.resource, e);
    const jobIds = [...new Set(events.map((e) => String(e.resource)).filter((r) => r.startsWith('job/')).map((r) => r.slice(4)))].slice(0, 30);
    const jobs = await Promise.all(jobIds.map((id) => api(`/v1/jobs/${encodeURIComponent(id)}`).catch(() => null)));
    jobs.forEach((j, i) => { if (j) names.set(jobIds[i], j.name || jobIds[i]); });
    const byId = new Map(jobs.filter(Boolean).map((j: any) => [j.id, j]));
    const warned = [...last.values()].filter((e) => e.action === 'reaper.warn' && String(e.resource).startsWith('job/'));
    const idle = warned.map((e) => [e, byId.get(String(e.resource).slice(4))]).filter(([, j]) => j?.state === 'running') as [any, any][];
    const jobLink = (resource: string) => {
      if (!resource.startsWith('job/')) return resource;
      const id = resource.slice(4);
      return link(`#/jobs/${encodeURIComponent(id)}`, names.get(id) ?? id);
    };
    const reclaimed = ((waste as any).teams as any[] ?? []).reduce((t, x) => t + num(x.idle_cost), 0);
    const idleNow = table('Idle now: warned by the reaper and not busy since', ['Job', 'Team', 'Owner', 'Idle since', '#GPUs', '#Busiest GPU in the window (%)', 'Policy'],
      idle.map(([e, j]) => [link(`#/jobs/${encodeURIComponent(j.id)}`, j.name), j.team, j.owner, when(e.time),
                            e.details?.gpus ?? '—', e.details?.max_percent ?? '—', e.details?.policy ?? '—']), 'No running job is idle.');
    idleNow.id = 'idle-now';
    parts.push(
      h('h2', {}, 'Idle GPUs and the reaper'),
      h('p', {}, `Idle cost reaped this month: ${(waste as any).error ? '—' : amount(reclaimed, cur)}.`),
      idleNow,
      (reaper as any).error ? unreadable('the reaper\'s audit events', (reaper as any).error)
        : table('Idle GPU reaper: warnings and cancellations, newest first', ['Time', 'Action', 'Job', 'Why'],
                events.map((e) => [when(e.time), e.action, jobLink(String(e.resource)),
                  `${e.details?.dry_run ? '(dry run) ' : ''}${e.details?.reason ?? ''}`]), 'The reaper has not acted.'));
    holder.replaceChildren();
    for (const part of parts) if (part) holder.append(...(Array.isArray(part) ? part.filter(Boolean) as Node[] : [part as Node]));
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
    api('/v1/audit/coverage').catch((e) => ({ error: e, findings: [] })),
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
      const ok = v.ok ? 'intact' : 'BROKEN';
      chain.replaceChildren(kv([['Chain', h('strong', { class: v.ok ? undefined : 'error' }, ok)],
        ['Events', fmt(v.events, 0)], ['Signed checkpoints', fmt(v.checkpoints, 0)],
        ['Last signed', v.last_signed_seq ? `seq ${v.last_signed_seq} (${fmt(v.unsigned_events, 0)} events since)` : 'never'],
        ['Imported provider events', v.imported_events === undefined ? '—' : `${fmt(v.imported_events, 0)} match their imports`],
        ...(v.reason ? [['Broken at', `seq ${v.first_bad_seq}: ${v.reason}`] as [string, Kid]] : []),
        ...(v.checkpoint_error ? [['Checkpoints', v.checkpoint_error] as [string, Kid]] : []),
        ...(v.import_error ? [['Imports', v.import_error] as [string, Kid]] : [])]), again);
    }).catch((e) => { chain.replaceChildren(h('p', { class: 'error' }, (e as Error).message)); });
  };
  verify(false);
  return [
    h('h1', {}, 'Audit'),
    h('section', { class: 'panel' }, h('h2', {}, 'Chain'), chain),
    form,
    f.actor ? h('p', {}, link(`#/audit/people/${encodeURIComponent(f.actor)}`, `${f.actor}'s page`)) : null,
    table('Events across Causeway and the providers, newest first', ['Time', 'Actor', 'Action', 'Provider', 'Message'], auditRows(found.events),
          'No event matches.'),
    found.next_cursor ? link('#/audit' + qs({ ...f, cursor: found.next_cursor }), 'Older events') : null,
    h('h2', {}, 'Coverage findings'),
    (coverage as any).error ? unreadable('the coverage findings', (coverage as any).error)
      : table('What the audit trail does not cover', ['Provider', 'Kind', 'Concerns', 'What is wrong and what to do'],
              (coverage.findings as any[]).map((x) => [x.provider ?? '—', x.kind ?? '—', x.name ?? '—', x.detail ?? '—']),
              'The trail covers everything the estate declares.'),
  ];
};

export const personPage: Page = async (params) => {
  const user = params[0];
  const [person, creds] = await Promise.all([
    api(`/v1/audit/people/${encodeURIComponent(user)}`),
    api(`/v1/people/${encodeURIComponent(user)}/credentials`).catch((e) => ({ error: e })),
  ]);
  const events: any[] = person.events ?? [];
  const c: any = creds;
  const credentials: Kid = c.error ? unreadable(`${user}'s credentials`, c.error) : [
    h('p', { id: 'verdict', class: c.retains_access ? 'error' : undefined }, c.verdict ?? ''),
    kv([['Directory', c.directory?.state ?? '—'], ['Groups', (c.directory?.groups ?? []).join(', ') || '—']]),
    table('API tokens', ['Token', 'Name', 'Scopes', 'State', 'Because', 'Expires'],
      (c.api_tokens as any[] ?? []).map((t) => [t.id, t.name, (t.scopes ?? []).join(' '), t.state, t.because ?? '—', when(t.expires_at)]),
      'No API token acts for them.'),
    table('Workload tokens minted for their jobs', ['Job', 'Audiences', 'State', 'Expires'],
      (c.workload_tokens as any[] ?? []).map((w) => [link(`#/jobs/${encodeURIComponent(w.job)}`, w.job), (w.audiences ?? []).join(', '),
                                                    w.state, when(w.expires_at)]), 'None.'),
    table('Break-glass grants', ['Grant', 'Role', 'Expires'],
      (c.breakglass as any[] ?? []).map((g) => [g.id, g.role, when(g.expires_at)]), 'None.'),
    table('Accounts at providers', ['Provider', 'Cluster', 'User', 'Accounts', 'State'],
      (c.provider_accounts as any[] ?? []).map((a) => [a.provider, a.cluster, `${a.kind ?? ''} ${a.account_user ?? ''}`.trim(), (a.accounts ?? []).join(', ') || '—', a.state]),
      'No provider keeps an account for them.'),
  ];
  return [
    h('h1', {}, user),
    h('h2', {}, 'Credentials and grants'),
    h('div', { id: 'credentials' }, credentials),
    h('h2', {}, 'What they could do'),
    table('Their roles, from their groups', ['Role', 'Team', 'Through group'],
      (person.grants as any[] ?? []).map((g) => [g.role, g.team ?? 'every team', g.group ?? '—']), 'No role.'),
    h('h2', {}, 'What they did, where'),
    table(`Events by ${user}`, ['Time', 'Actor', 'Action', 'Provider', 'Message'], auditRows(events), 'No event.'),
  ];
};

export const readinessPage: Page = async () => {
  const [r, questions, runs] = await Promise.all([
    api('/v1/readiness'),
    api('/v1/readiness/questions').catch((e) => ({ error: e })),
    api('/v1/acceptance/runs').catch((e) => ({ error: e, runs: [] })),
  ]);
  const qa: any = questions;
  const rs: any = runs;
  return [
    h('h1', {}, 'Readiness'),
    h('p', { class: 'muted' }, `Evaluated ${when(r.at)}`),
    table('Controls per provider', ['Control', 'Provider', 'State', 'Owner', 'Why'],
      (r.findings as any[]).map((f) => [f.control, f.provider, f.state, ownerText(f.owner), f.reason])),
    h('h2', {}, 'The four questions'),
    qa.error ? unreadable('the four questions', qa.error)
      : h('div', { id: 'questions' }, (qa.answers as any[] ?? []).map((a) => h('section', { class: 'panel' },
          h('h3', {}, `${a.text} — ${a.provider}`),
          h('p', {}, h('strong', {}, a.answer), ': ', a.reason),
          table('What the answer rests on', ['Control', 'State', 'Why'],
                (a.controls as any[] ?? []).map((x) => [x.control, x.state, x.reason]))))),
    h('h2', {}, 'Acceptance tests'),
    rs.error ? unreadable('the acceptance runs', rs.error)
      : table('The latest run of each acceptance test', ['Test', 'Verdict', 'Finished', 'By', 'Steps', 'Audit seq'],
          (rs.runs as any[] ?? []).map((x) => [x.test, x.seq === null || x.seq === undefined ? 'never run' : x.passed ? 'passed' : 'FAILED',
            when(x.finished), x.actor ?? '—',
            x.steps ? `${(x.steps as any[]).filter((st) => st.result === 'pass').length} of ${(x.steps as any[]).length} passed` : '—',
            x.seq ?? '—'])),
    rs.recovery_objective_ms ? h('p', { class: 'muted' }, `Recovery objective: ${span(rs.recovery_objective_ms / 1000)}.`) : null,
  ];
};

export const peoplePage: Page = async () => {
  const data = await api('/v1/breakglass');
  const status = h('p', { role: 'status' });
  const rows = (data.breakglass as any[]).map((g) => {
    // The server says whom it would let approve: an admin through a group,
    // with a token carrying the admin scope, not the requester.
    const approve = g.state === 'requested' && g.can_approve ? h('button', { class: 'approve' }, 'Approve') : null;
    approve?.addEventListener('click', async () => {
      try {
        await api(`/v1/breakglass/${encodeURIComponent(g.id)}/approve`, 'POST', {});
        location.reload();
      } catch (e) {
        status.textContent = `Not approved: ${(e as Error).message}`;
      }
    });
    return [g.id, link(`#/audit/people/${encodeURIComponent(g.user)}`, g.user), g.role, g.team ?? 'every team', g.reason,
            g.state, when(g.expires_at), approve];
  });
  return [h('h1', {}, 'People'), h('h2', {}, 'Break-glass requests'), status,
          table('Requests for time-boxed elevation, with their reasons', ['Request', 'Person', 'Role', 'Team', 'Reason', 'State', 'Expires', 'Action'],
                rows, 'No break-glass request in the last 90 days.')];
};
