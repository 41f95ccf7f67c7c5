// Planning: the company's own recent history replayed through the
// scheduler on the estate as it is and with the changes a planner weighs
// (a reservation added, a cluster removed, a price changed), compared
// figure by figure (POST /v1/plan/history, docs/planning.md). A replay
// takes seconds, so it runs when asked, not when the page opens.
import { api } from '../api';
import { h, table, type Kid } from '../dom';
import type { Page } from '../main';


const lines = (v: FormDataEntryValue | null) => String(v ?? '').split('\n').map((l) => l.trim()).filter(Boolean);

function report(r: any): Kid[] {
  const rows: string[][] = r.headline_rows ?? [];
  const [head = [], ...body] = rows;
  const notes: string[] = [...(r.trace?.notes ?? [])];
  for (const e of r.estates ?? []) for (const c of e.changes ?? []) notes.push(`${e.name}: ${c}`);
  const base = r.estates?.[0]?.name ?? '';
  return [
    h('p', {}, `${Number(r.trace?.jobs ?? 0).toLocaleString('en-US')} jobs from the ledger, ${r.seeds ?? 1} seed(s), replayed in ${Number(r.wall_seconds ?? 0).toFixed(2)} s.`),
    notes.length ? h('ul', {}, notes.map((n) => h('li', {}, n))) : null,
    table('Headline figures per candidate estate (median across seeds; 5th–95th percentile in brackets)', head, body),
    (r.differences ?? []).length
      ? table(`Largest changes against ${base} (changes smaller than a figure's unit shows are left out)`,
              ['Estate', 'Figure', '#From', '#To', '#Change'],
              (r.differences as any[]).slice(0, 15).map((d) => [d.estate, d.label ?? d.figure, d.base_text, d.value_text,
                d.base === 0 ? 'new' : `${d.relative >= 0 ? '+' : ''}${(d.relative * 100).toLocaleString('en-US', { maximumFractionDigits: 1 })}%`]))
      : h('p', { class: 'muted' }, `No figure changes against ${base} by more than its unit shows.`),
    h('p', { class: 'muted' }, 'A group\'s cost per completed job counts its own attempts; the whole estate\'s also counts reservations left unused.'),
  ];
}

export const planningPage: Page = async () => {
  const area = (name: string, label: string, example: string) =>
    h('label', {}, label, h('textarea', { name, rows: 2, cols: 36, placeholder: example }));
  const form = h('form', { class: 'filters', 'aria-label': 'Compare candidate estates' },
    h('label', {}, 'History (since)', h('input', { name: 'since', value: '30d', size: 6 })),
    h('label', {}, 'Seeds', h('input', { name: 'seeds', type: 'number', min: 1, max: 5, value: 1 })),
    area('add_reservation', 'Add reservations, one per line', 'CLUSTER:GPU_TYPE:COUNT:TERM:PRICE'),
    area('remove_cluster', 'Remove clusters', 'CLUSTER'),
    area('price', 'Change prices', 'CLUSTER:GPU_TYPE:ON_DEMAND[:SPOT]'),
    h('button', { type: 'submit', id: 'replay' }, 'Replay and compare'));
  const out = h('div', { id: 'plan-report', 'aria-live': 'polite' },
    h('p', { class: 'muted' }, 'Replays the jobs of the period through the scheduler on the estate as it is and, with changes, on the estate changed.'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const d = new FormData(form);
    out.replaceChildren(h('p', { class: 'muted' }, 'Replaying…'));
    try {
      const r = await api('/v1/plan/history', 'POST', {
        since: String(d.get('since') ?? '30d'), seeds: Number(d.get('seeds') ?? 1),
        add_reservation: lines(d.get('add_reservation')), remove_cluster: lines(d.get('remove_cluster')), price: lines(d.get('price')),
      });
      out.replaceChildren(...(report(r).filter(Boolean) as Node[]));
    } catch (err) {
      out.replaceChildren(h('p', { class: 'error', role: 'alert' }, (err as Error).message));
    }
  });
  return [h('h1', {}, 'Planning'), form, out];
};
