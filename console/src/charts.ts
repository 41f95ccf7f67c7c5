// Charts drawn as SVG by hand: a few bars and rectangles do not justify a
// chart library's weight (docs/console.md). Each chart has a <title> and a
// text equivalent (the table beside it), for screen readers.
import { h } from './dom';

const NS = 'http://www.w3.org/2000/svg';
const COLORS = ['var(--c1)', 'var(--c2)', 'var(--c3)', 'var(--c4)', 'var(--c5)', 'var(--c6)'];

function s(tag: string, attrs: Record<string, string | number>, ...kids: (Node | string)[]): SVGElement {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const k of kids) el.appendChild(typeof k === 'string' ? document.createTextNode(k) : k);
  return el;
}

export function color(i: number): string {
  return COLORS[i % COLORS.length];
}

// Stacked columns: one per category, one segment per series.
export function stackedBars(title: string, categories: string[], series: string[],
                            value: (cat: string, ser: string) => number): HTMLElement {
  const W = 640, H = 220, left = 60, bottom = 24, top = 10;
  const totals = categories.map((c) => series.reduce((t, se) => t + value(c, se), 0));
  const max = Math.max(1, ...totals);
  const bw = Math.min(60, (W - left) / Math.max(1, categories.length) - 10);
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, width: '100%', role: 'img', 'aria-label': title, class: 'chart' },
                s('title', {}, title));
  svg.appendChild(s('text', { x: 4, y: top + 8 }, max.toLocaleString('en-US', { maximumFractionDigits: 0 })));
  svg.appendChild(s('line', { x1: left - 4, x2: W, y1: H - bottom, y2: H - bottom, stroke: '#6b7785' }));
  categories.forEach((c, i) => {
    const x = left + i * (bw + 10);
    let y = H - bottom;
    series.forEach((se, j) => {
      const v = value(c, se);
      const hgt = (v / max) * (H - bottom - top);
      if (hgt > 0) {
        y -= hgt;
        svg.appendChild(s('rect', { x, y, width: bw, height: hgt, fill: color(j), class: 'bar' },
                          s('title', {}, `${c} · ${se}: ${v.toLocaleString('en-US', { maximumFractionDigits: 2 })}`)));
      }
    });
    svg.appendChild(s('text', { x: x, y: H - 8 }, c.length > 10 ? c.slice(0, 10) : c));
  });
  const legend = h('div', { class: 'legend' },
    series.map((se, j) => h('span', {}, h('i', { style: `background:${color(j)}` }), se)));
  return h('figure', { style: 'margin:0' }, svg as unknown as Node, legend);
}

// Horizontal bars of used against nominal, borrowed shown past the nominal.
export function quotaBar(label: string, nominal: number, used: number, borrowed: number): HTMLElement {
  const W = 300, H = 16;
  const scale = W / Math.max(1, nominal + borrowed, used);
  const own = Math.min(used, nominal);
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img',
                         'aria-label': `${label}: ${used} used of ${nominal} nominal, ${borrowed} borrowed` },
                s('rect', { x: 0, y: 2, width: nominal * scale, height: H - 4, fill: '#e3e8ee', stroke: '#6b7785' }),
                s('rect', { x: 0, y: 2, width: own * scale, height: H - 4, fill: 'var(--c1)' }),
                s('rect', { x: nominal * scale, y: 2, width: borrowed * scale, height: H - 4, fill: 'var(--c2)' }));
  return svg as unknown as HTMLElement;
}

// Attempts on a time axis: one row each, from start to end (or now), with
// the axis's times below and a legend of what the colours mean.
const STATE_FILL: Record<string, string> = { succeeded: 'var(--c3)', running: 'var(--c1)' };
export function timeline(title: string, rows: { label: string; start: number; end: number; state: string }[]): HTMLElement {
  const W = 640, row = 22, left = 90, axis = 30;
  const H = rows.length * row + axis;
  const t0 = Math.min(...rows.map((r) => r.start));
  const t1 = Math.max(t0 + 1, ...rows.map((r) => r.end));
  const x = (t: number) => left + ((t - t0) / (t1 - t0)) * (W - left - 10);
  const fill = (state: string) => STATE_FILL[state] ?? 'var(--c2)';
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, width: '100%', role: 'img', 'aria-label': title }, s('title', {}, title));
  rows.forEach((r, i) => {
    const y = i * row + 4;
    svg.appendChild(s('text', { x: 0, y: y + 13 }, r.label));
    svg.appendChild(s('rect', { x: x(r.start), y, width: Math.max(2, x(r.end) - x(r.start)), height: row - 8, fill: fill(r.state) },
                      s('title', {}, `${r.label}: ${r.state}`)));
  });
  // The time axis: a line and three ticks (start, middle, end), in UTC.
  const base = rows.length * row + 4;
  svg.appendChild(s('line', { x1: left, x2: W - 10, y1: base, y2: base, stroke: '#6b7785' }));
  const sameDay = new Date(t0).toISOString().slice(0, 10) === new Date(t1).toISOString().slice(0, 10);
  const label = (t: number) => new Date(t).toISOString().slice(sameDay ? 11 : 5, 16).replace('T', ' ');
  [t0, (t0 + t1) / 2, t1].forEach((t, i) => {
    const tx = x(t);
    svg.appendChild(s('line', { x1: tx, x2: tx, y1: base, y2: base + 4, stroke: '#6b7785' }));
    svg.appendChild(s('text', { x: tx, y: base + 16, 'text-anchor': i === 0 ? 'start' : i === 2 ? 'end' : 'middle' }, label(t)));
  });
  const states = [...new Set(rows.map((r) => r.state))];
  const legend = h('div', { class: 'legend' }, h('span', {}, `UTC${sameDay ? `, ${new Date(t0).toISOString().slice(0, 10)}` : ''}:`),
    states.map((st) => h('span', {}, h('i', { style: `background:${fill(st)}` }), st)));
  return h('figure', { style: 'margin:0' }, svg as unknown as Node, legend);
}

// A line over days: `points` in order, null where nothing was measured;
// the y axis from 0 to `max` (a share in percent when max is 100).
export function lineChart(title: string, points: { label: string; value: number | null }[], max: number, unit: string): HTMLElement {
  const W = 640, H = 200, left = 44, bottom = 24, top = 10;
  const n = Math.max(1, points.length - 1);
  const x = (i: number) => left + (i / n) * (W - left - 10);
  const y = (v: number) => H - bottom - (Math.min(v, max) / max) * (H - bottom - top);
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, width: '100%', role: 'img', 'aria-label': title, class: 'chart' },
                s('title', {}, title));
  for (const v of [0, max / 2, max]) {
    svg.appendChild(s('line', { x1: left, x2: W - 10, y1: y(v), y2: y(v), stroke: '#e3e8ee' }));
    svg.appendChild(s('text', { x: 2, y: y(v) + 4 }, `${v}${unit}`));
  }
  let d = '';
  points.forEach((p, i) => {
    if (p.value === null) return;
    d += `${d === '' || points[i - 1]?.value === null ? 'M' : 'L'}${x(i).toFixed(1)},${y(p.value).toFixed(1)} `;
    svg.appendChild(s('circle', { cx: x(i), cy: y(p.value), r: 3, fill: 'var(--c1)' },
                      s('title', {}, `${p.label}: ${p.value}${unit}`)));
  });
  if (d) svg.insertBefore(s('path', { d, fill: 'none', stroke: 'var(--c1)', 'stroke-width': 2 }), svg.firstChild?.nextSibling ?? null);
  const step = Math.max(1, Math.ceil(points.length / 7));
  points.forEach((p, i) => {
    if (i % step === 0 || i === points.length - 1) {
      svg.appendChild(s('text', { x: x(i), y: H - 8, 'text-anchor': 'middle' }, p.label.slice(5)));
    }
  });
  return h('figure', { style: 'margin:0' }, svg as unknown as Node);
}
