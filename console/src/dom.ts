// Building the page from data without ever parsing data as HTML: text goes
// in through text nodes only, so nothing a job name or an audit event holds
// can become markup (and the CSP forbids inline script besides).

export type Kid = Node | string | number | null | undefined | false | Kid[];
type Attrs = Record<string, string | number | boolean | EventListener | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...kids: Kid[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.replace(/^on/, ''), v);
    // Through the CSSOM: the CSP refuses style attributes (no 'unsafe-inline').
    else if (k === 'style') el.style.cssText = String(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, kids);
  return el;
}

export function append(el: Node, kids: Kid[]): void {
  for (const k of kids) {
    if (k === null || k === undefined || k === false) continue;
    if (Array.isArray(k)) append(el, k);
    else el.appendChild(typeof k === 'object' ? k : document.createTextNode(String(k)));
  }
}

// A table: `head` names the columns; a column whose name starts with '#'
// is numeric (right-aligned; the '#' is not shown). It scrolls sideways in
// its own box on a narrow screen, never the page. `empty` says what an
// empty table means.
export function table(caption: string, head: string[], rows: Kid[][], empty = 'None.'): HTMLElement {
  const num = head.map((c) => c.startsWith('#'));
  const t = h('table', {},
    h('caption', { class: 'muted', style: 'text-align:left' }, caption),
    h('thead', {}, h('tr', {}, head.map((c, i) => h('th', { scope: 'col', class: num[i] ? 'num' : undefined }, num[i] ? c.slice(1) : c)))),
    h('tbody', {}, rows.length === 0
      ? h('tr', {}, h('td', { colspan: head.length, class: 'muted' }, empty))
      : rows.map((r) => h('tr', {}, r.map((c, i) => h('td', { class: num[i] ? 'num' : undefined }, c))))));
  return h('div', { class: 'table-wrap', role: 'region', 'aria-label': caption, tabindex: 0 }, t);
}

// A number with thousands separators and `places` decimals ("—" for none).
export function fmt(v: unknown, places = 2): string {
  if (v === null || v === undefined || v === '') return '—';
  const n = Number(v);
  if (!Number.isFinite(n)) return String(v);
  return n.toLocaleString('en-US', { minimumFractionDigits: places, maximumFractionDigits: places });
}

// An amount the API gives as a decimal string, with its currency.
export function amount(v: unknown, currency: string, places = 2): string {
  const s = fmt(v, places);
  return s === '—' ? s : `${s} ${currency}`;
}

// A span of time in words: "40 s", "12 min", "3 h 20 min", "24 days".
export function span(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 48 * 3600) {
    const hours = Math.floor(s / 3600), min = Math.round((s % 3600) / 60);
    return min ? `${hours} h ${min} min` : `${hours} h`;
  }
  return `${Math.round(s / 86400)} days`;
}

// An owner as readiness and the estate name one: a person, or a group.
export function ownerText(o: unknown): string {
  if (o === null || o === undefined || o === '') return '—';
  if (typeof o === 'string') return o;
  const x = o as Record<string, unknown>;
  if (typeof x.user === 'string') return x.user;
  if (typeof x.group === 'string') return `group ${x.group}`;
  return '—';
}

// What to show where data could not be read: the person's roles not
// allowing it is said as such, never drawn as an empty table or a 0.
export function unreadable(what: string, e: unknown): HTMLElement {
  const err = e as { status?: number; message?: string };
  return h('p', { class: 'muted denied' }, err?.status === 403
    ? `Your roles do not let you read ${what}.`
    : `${what[0].toUpperCase()}${what.slice(1)} could not be read: ${err?.message ?? String(e)}`);
}

export function kv(pairs: [string, Kid][]): HTMLDListElement {
  return h('dl', { class: 'kv' }, pairs.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v ?? '—')]));
}

export function stateBadge(state: string): HTMLSpanElement {
  return h('span', { class: `state state-${state}` }, state);
}

// Money as the API gives it: integer micros of the estate's currency.
export function money(micros: number | undefined, currency = 'USD'): string {
  if (micros === undefined || micros === null) return '—';
  return `${(micros / 1e6).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} ${currency}`;
}

export function when(iso: string | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return isNaN(d.getTime()) ? iso : d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

export function link(href: string, text: Kid): HTMLAnchorElement {
  return h('a', { href }, text);
}

// Asks before a consequential action, in a modal <dialog> (focus moves into
// it, Escape cancels). Resolves true only for the confirm button.
export function confirmDialog(question: string, confirmLabel: string): Promise<boolean> {
  return new Promise((resolve) => {
    const yes = h('button', { class: 'danger', value: 'yes' }, confirmLabel);
    const no = h('button', { class: 'secondary', value: 'no' }, 'Keep it');
    const form = h('form', { method: 'dialog' }, h('p', { id: 'confirm-q' }, question), h('div', { class: 'pager' }, no, yes));
    const dlg = h('dialog', { 'aria-labelledby': 'confirm-q' }, form);
    dlg.addEventListener('close', () => {
      resolve(dlg.returnValue === 'yes');
      dlg.remove();
    });
    document.body.appendChild(dlg);
    dlg.showModal();
    no.focus();
  });
}
