// The console's shell: reads the session, draws the navigation, and routes
// "#/page/arg?query" to a page. A page returns what to show; `live`
// registers a refresh that runs while the page is open (cleared on leave).
import { api, ApiError, setCsrf, whenSignedOut, type Session } from './api';
import { append, h, type Kid } from './dom';
import { jobPage, jobsPage } from './pages/jobs';
import { planningPage } from './pages/planning';
import { servicePage, servicesPage } from './pages/services';
import { auditPage, costPage, gpusPage, peoplePage, personPage, queuePage, queuesPage, readinessPage } from './pages/overview';

export type Live = (fn: () => Promise<void>, ms: number) => void;
export type Page = (params: string[], query: URLSearchParams, live: Live) => Promise<Kid>;

// Each page with the scope its data needs: navigation offers only the pages
// the person's roles (narrowed to their token) let them read.
const PAGES: { path: string; title: string; page: Page; nav?: boolean; scope?: string }[] = [
  { path: 'jobs', title: 'Jobs', page: jobsPage, nav: true, scope: 'jobs:read' },
  { path: 'jobs/*', title: 'Job', page: jobPage },
  { path: 'queues', title: 'Queues', page: queuesPage, nav: true, scope: 'jobs:read' },
  { path: 'queues/*', title: 'Queue', page: queuePage },
  { path: 'services', title: 'Services', page: servicesPage, nav: true, scope: 'jobs:read' },
  { path: 'services/*', title: 'Service', page: servicePage },
  { path: 'cost', title: 'Cost', page: costPage, nav: true, scope: 'cost:read' },
  { path: 'gpus', title: 'GPUs and waste', page: gpusPage, nav: true, scope: 'clusters:read' },
  { path: 'audit', title: 'Audit', page: auditPage, nav: true, scope: 'audit:read' },
  { path: 'audit/people/*', title: 'Person', page: personPage },
  { path: 'readiness', title: 'Readiness', page: readinessPage, nav: true, scope: 'audit:read' },
  { path: 'planning', title: 'Planning', page: planningPage, nav: true, scope: 'cost:read' },
  { path: 'people', title: 'People', page: peoplePage, nav: true, scope: 'audit:read' },
];

// The signed-in principal's scopes (null: not known, everything offered).
let scopes: string[] | null = null;
const allowed = (p: { scope?: string }) => !p.scope || scopes === null || scopes.includes('admin') || scopes.includes(p.scope);

let timers: number[] = [];
let session: Session = { signed_in: false, oidc: false };

// Why a sign-in through the IdP failed, by the reason the server names in
// the URL; no text from the URL is ever shown (see SignInFailed).
const SIGN_IN_FAILED: Record<string, string> = {
  'not-allowed': 'Signed in at the identity provider, but Causeway does not know you or you have no roles here. Ask your administrator.',
  expired: 'That sign-in expired or was already used. Sign in again.',
  'idp-unreachable': 'The identity provider could not be reached. Try again in a moment.',
  'idp-refused': 'The identity provider did not sign you in.',
  failed: 'Signing in failed. Try again, or ask your administrator.',
};

function signInPage(error: string): Kid {
  const token = h('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'off', required: true, size: 40 });
  const status = h('p', { role: 'alert', class: 'error' }, error);
  const form = h('form', {},
    h('label', { for: 'token' }, 'API token'), token,
    h('button', { type: 'submit' }, 'Sign in with the token'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await api('/auth/token', 'POST', { token: token.value });
      location.hash = '#/jobs';
      await start();
    } catch (err) {
      status.textContent = (err as Error).message;
    }
  });
  return h('div', { class: 'signin' },
    h('h1', {}, 'Sign in to Causeway'),
    session.oidc ? [h('p', {}, h('a', { href: '/auth/login', id: 'oidc-login' }, 'Sign in with your company account')),
                    h('p', { class: 'muted' }, 'or, to bootstrap, with an API token:')] : null,
    form, status);
}

function drawChrome(): void {
  const nav = document.getElementById('nav')!;
  const who = document.getElementById('who')!;
  const current = location.hash.replace(/^#\/?/, '').split(/[/?]/)[0];
  nav.replaceChildren(...(session.signed_in ? PAGES.filter((p) => p.nav && allowed(p)).map((p) =>
    h('a', { href: `#/${p.path}`, 'aria-current': p.path === current ? 'page' : undefined }, p.title)) : []));
  who.replaceChildren();
  if (session.signed_in) {
    const out = h('button', { id: 'sign-out' }, 'Sign out');
    out.addEventListener('click', async () => {
      await api('/auth/logout', 'POST', {}).catch(() => {});
      session = { signed_in: false, oidc: session.oidc };
      location.hash = '#/signin';
    });
    append(who, [h('span', { id: 'whoami' }, session.name ?? ''), out]);
  }
}

async function route(): Promise<void> {
  for (const t of timers) clearInterval(t);
  timers = [];
  const main = document.getElementById('main')!;
  const [path, query = ''] = location.hash.replace(/^#\/?/, '').split('?');
  const q = new URLSearchParams(query);
  drawChrome();
  if (!session.signed_in || path.startsWith('signin')) {
    document.title = 'Sign in · Causeway';
    const reason = path.startsWith('signin/') ? path.slice(7) : '';
    const known = Object.prototype.hasOwnProperty.call(SIGN_IN_FAILED, reason);
    main.replaceChildren(h('div', {}, signInPage(reason ? (known ? SIGN_IN_FAILED[reason] : SIGN_IN_FAILED.failed) : '')));
    main.dataset.at = location.hash;
    return;
  }
  const parts = path.split('/').filter(Boolean);
  const found = PAGES.find((p) => {
    const pat = p.path.split('/');
    return pat.length === parts.length && pat.every((s, i) => s === '*' || s === parts[i]);
  }) ?? PAGES.find((p) => p.nav && allowed(p)) ?? PAGES[0];
  const params = found.path.split('/').flatMap((s, i) => (s === '*' ? [decodeURIComponent(parts[i])] : []));
  document.title = `${found.title} · Causeway`;
  const live: Live = (fn, ms) => {
    timers.push(window.setInterval(() => { fn().catch(() => {}); }, ms));
  };
  const at = location.hash;
  try {
    const content = await found.page(params, q, live);
    if (location.hash !== at) return;  // left while loading
    main.replaceChildren();
    append(main, [content]);
  } catch (e) {
    const msg = e instanceof ApiError && e.status === 403 ? `Your roles do not allow this page: ${e.message}` : (e as Error).message;
    main.replaceChildren(h('h1', {}, found.title), h('p', { class: 'error', role: 'alert' }, msg));
  }
  // Which route the content shows: end-to-end tests wait for it, and the
  // render benchmark (bench/console) reads when the first one was drawn.
  main.dataset.at = at;
  if (performance.getEntriesByName('causeway:rendered').length === 0) performance.mark('causeway:rendered');
  main.focus();
}

async function start(): Promise<void> {
  session = await api<Session>('/auth/session');
  setCsrf(session.csrf ?? '');
  scopes = null;
  if (session.signed_in) {
    scopes = await api<{ scopes?: string[] }>('/v1/whoami').then((w) => w.scopes ?? null).catch(() => null);
  }
  await route();
}

whenSignedOut(() => {
  session = { signed_in: false, oidc: session.oidc };
  if (!location.hash.startsWith('#/signin')) location.hash = '#/signin';
});
window.addEventListener('hashchange', () => { route(); });
start().catch((e) => {
  document.getElementById('main')!.textContent = `The console could not reach the server: ${(e as Error).message}`;
});
