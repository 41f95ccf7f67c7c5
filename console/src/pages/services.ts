// Services: the list (mode, ready replicas, endpoint, request rate) and a
// service's page: its replicas per place and their state, the endpoint,
// requests and errors over the last passes, its transitions with who acts
// next, and what it costs per hour and per 1,000 requests (from the
// ledger, where the person may read cost). Refreshed while open.
import { api, qs } from '../api';
import { append, fmt, h, kv, link, stateBadge, table, unreadable, when, type Kid } from '../dom';
import { stackedBars } from '../charts';
import type { Page } from '../main';

const MODE_TEXT: Record<string, string> = {
  starting: 'starting: nothing has served yet',
  normal: 'normal: the preferred place serves',
  failed_over: 'failed over: the alternate serves',
  degraded: 'degraded: neither place can serve',
};

export const servicesPage: Page = async (_params, _q, live) => {
  const holder = h('div', { 'aria-live': 'polite' });
  const load = async () => {
    const data = await api('/v1/services');
    holder.replaceChildren(table('Services of your teams',
      ['Service', 'Team', 'Mode', 'Ready', 'Endpoint', '#Requests/s', '#Requests', '#Errors'],
      (data.services ?? []).map((s: any) => [
        link(`#/services/${encodeURIComponent(s.name)}`, s.name), s.team, stateBadge(s.mode),
        `${s.ready_replicas} (target ${s.target_replicas})`, s.endpoint, fmt(s.qps, 1), s.requests, s.errors]),
      'No services: bring one up with causeway service up FILE.'));
  };
  await load();
  live(load, 3000);
  return [h('h1', {}, 'Services'), holder];
};

// What the service costs, from the ledger grouped by service.
async function costPanel(name: string): Promise<Kid> {
  try {
    const sb = await api(`/v1/cost/showback${qs({ source: 'metered', by: 'service' })}`);
    const row = (sb.rows ?? []).find((r: any) => r.service === name);
    const cur = sb.currency ?? 'USD';
    const of = (v: unknown) => (v === null || v === undefined ? '—' : `${fmt(v)} ${cur}`);
    return h('section', { 'aria-labelledby': 'service-cost' }, h('h2', { id: 'service-cost' }, 'Cost'),
      row ? kv([['Replicas\u2019 cost', of(row.total_cost)], ['Per hour', of(row.cost_per_hour)],
                ['Per 1,000 requests', of(row.cost_per_1000_requests)], ['Requests recorded', row.requests ?? '—']])
          : h('p', { class: 'muted' }, 'Nothing metered yet.'));
  } catch (e) {
    return h('section', {}, h('h2', {}, 'Cost'), unreadable('cost', e));
  }
}

export const servicePage: Page = async (params, _q, live) => {
  const name = params[0];
  const body = h('div', { 'aria-live': 'polite' });
  const cost = h('div', {});
  const load = async () => {
    const s = await api(`/v1/services/${encodeURIComponent(name)}`);
    const f = s.failover ?? {};
    const places: [string, string][] = [['preferred', f.preferred ?? ''], ['alternate', f.alternate ?? ''], ['degraded', '']];
    const replicas: any[] = s.replicas ?? [];
    const history: any[] = (s.history ?? []).slice(-60);
    body.replaceChildren();
    append(body, [
      kv([['Mode', h('span', { id: 'service-mode' }, stateBadge(s.mode), ' ', MODE_TEXT[s.mode] ?? '')],
          ['Endpoint', h('code', { id: 'service-endpoint' }, s.endpoint)],
          ['Proxy', s.proxy], ['Team', s.team], ['Owner', s.owner],
          ['Revision', `${s.revision ?? 1} (updates ${s.update_mode === 'blue_green' ? 'blue-green' : 'rolling'})`],
          ['Replicas ready', `${s.ready_replicas} (target ${s.target_replicas})`],
          ['Requests', `${s.requests} (${fmt(s.qps, 1)}/s now), ${s.errors} errors`],
          ['Hold-down', f.hold_down_seconds !== undefined ? `${f.hold_down_seconds} s` : '—']]),
      s.replicas_refused ? h('p', { role: 'alert', class: 'error' }, `Replicas refused: ${s.replicas_refused}`) : null,
      h('h2', {}, 'Replicas per place'),
      places.map(([role, place]) => {
        const here = replicas.filter((r) => r.role === role);
        if (here.length === 0 && role === 'degraded') return null;
        return table(`${role[0].toUpperCase()}${role.slice(1)}${place ? ` (${place})` : ''}`,
          ['Replica', 'Revision', 'State', 'Cluster', 'Address', 'Traffic', '#Requests', '#Errors', 'Probe'],
          here.map((r) => [link(`#/jobs/${encodeURIComponent(r.job)}`, r.job), r.revision ?? 1, stateBadge(r.state), r.cluster || '—',
                           r.address || '—', r.in_traffic ? 'in' : 'out', r.requests, r.errors, r.probe || '—']),
          'No replica here now.');
      }),
      h('h2', {}, 'Requests and errors'),
      history.length ? [
        stackedBars(`Requests and errors per pass of ${name}`, history.map((p) => when(p.at).slice(11, 19)),
                    ['answered', 'errors'], (cat, ser) => {
                      const p = history.find((x) => when(x.at).slice(11, 19) === cat);
                      return !p ? 0 : ser === 'errors' ? p.errors : p.requests - p.errors;
                    }),
        table('Requests and errors per pass (text)', ['Time', '#Requests', '#Errors'],
              history.slice(-10).map((p) => [when(p.at), p.requests, p.errors]))]
        : h('p', { class: 'muted' }, 'No requests counted yet.'),
      h('h2', {}, 'Transitions'),
      h('ol', { class: 'events', id: 'transitions' }, (s.transitions ?? []).map((t: any) =>
        h('li', { class: t.to === 'normal' ? 'good' : 'bad' }, h('time', { datetime: t.at }, when(t.at)), ' ',
          h('strong', {}, t.to), ' ', t.reason, t.next_action_owner ? ` (${t.next_action_owner})` : '')))]);
  };
  await load();
  append(cost, [await costPanel(name)]);
  live(load, 2000);
  return [h('h1', {}, `Service ${name}`), body, cost];
};
