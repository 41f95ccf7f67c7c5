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
  svg.appendChild(s('text', { x: 4, y: top + 8 }, max.toFixed(0)));
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
                          s('title', {}, `${c} · ${se}: ${v.toFixed(2)}`)));
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

// Attempts on a time axis: one row each, from start to end (or now).
export function timeline(title: string, rows: { label: string; start: number; end: number; state: string }[]): HTMLElement {
  const W = 640, row = 22, left = 90;
  const H = rows.length * row + 20;
  const t0 = Math.min(...rows.map((r) => r.start));
  const t1 = Math.max(t0 + 1, ...rows.map((r) => r.end));
  const x = (t: number) => left + ((t - t0) / (t1 - t0)) * (W - left - 10);
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, width: '100%', role: 'img', 'aria-label': title }, s('title', {}, title));
  rows.forEach((r, i) => {
    const y = i * row + 4;
    const fill = r.state === 'succeeded' ? 'var(--c3)' : r.state === 'running' ? 'var(--c1)' : 'var(--c2)';
    svg.appendChild(s('text', { x: 0, y: y + 13 }, r.label));
    svg.appendChild(s('rect', { x: x(r.start), y, width: Math.max(2, x(r.end) - x(r.start)), height: row - 8, fill },
                      s('title', {}, `${r.label}: ${r.state}`)));
  });
  svg.appendChild(s('text', { x: left, y: H - 2 }, new Date(t0).toISOString().slice(0, 16).replace('T', ' ')));
  return svg as unknown as HTMLElement;
}
