// Talking to the server: the session cookie rides along by itself (same
// origin); writes add the session's CSRF token as X-CSRF-Token, which the
// server checks against the session. Errors arrive as the API's one shape,
// {"error": {"code", "message"}}, and are thrown as ApiError.

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

export interface Session {
  signed_in: boolean;
  name?: string;
  kind?: string;
  csrf?: string;
  expires_at?: string;
  oidc: boolean;
}

let csrf = '';
export function setCsrf(token: string): void {
  csrf = token;
}

// Called when the server says the session is gone (401): show sign-in.
let onSignedOut: () => void = () => {};
export function whenSignedOut(fn: () => void): void {
  onSignedOut = fn;
}

export async function api<T = any>(path: string, method = 'GET', body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (method !== 'GET') headers['X-CSRF-Token'] = csrf;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    cache: 'no-store',
  });
  const text = await r.text();
  let data: any = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!r.ok) {
    if (r.status === 401 && !path.startsWith('/auth/')) onSignedOut();
    const e = data?.error ?? {};
    throw new ApiError(r.status, e.code ?? String(r.status), e.message ?? `${method} ${path}: HTTP ${r.status}`);
  }
  return data as T;
}

// A query string from the fields that are set.
export function qs(params: Record<string, string | number | undefined>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}
