// api.js — the web API client: the passport (kept per share code, as
// Dify's front end keeps it), the headers Dify's front end sends, JSON
// calls and server-sent event streams.

// The mount prefix: everything before /chat/, /chatbot/, ... in the path.
const m = location.pathname.match(/^(.*?)\/(chat|chatbot|completion|workflow)\/([A-Za-z0-9]{16})\/?$/);
export const kind = m ? m[2] : '';
export const code = m ? m[3] : '';
export const base = m ? m[1] : '';

let passport = '';

export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.message) || ('HTTP ' + status));
    this.status = status;
    this.code = body && body.code;
  }
}

function headers(json) {
  const h = { 'X-App-Code': code };
  if (passport) h['X-App-Passport'] = passport;
  if (json) h['Content-Type'] = 'application/json';
  return h;
}

// Gets (or reuses) the passport; userId from the embed's sys.user_id.
export async function login(userId, passcode) {
  const key = 'passport-' + code;
  const keyUser = key + '-user';
  const stored = localStorage.getItem(key);
  if (stored && (localStorage.getItem(keyUser) || '') === (userId || '')) {
    passport = stored;
    return;
  }
  const h = { 'X-App-Code': code };
  if (passcode) h['X-App-Passcode'] = passcode;
  const q = userId ? '?user_id=' + encodeURIComponent(userId) : '';
  const res = await fetch(base + '/api/passport' + q, { headers: h });
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, body);
  passport = body.access_token;
  localStorage.setItem(key, passport);
  localStorage.setItem(keyUser, userId || '');
}

export function logout() {
  localStorage.removeItem('passport-' + code);
  passport = '';
}

export async function call(method, path, body) {
  const res = await fetch(base + '/api' + path, {
    method, headers: headers(body !== undefined),
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  if (res.status === 204) return null;
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

// Uploads a File (multipart "file") to /api/files/upload; Dify's file
// fields {id, name, size, extension, mime_type, ...}.
export async function upload(file) {
  const fd = new FormData();
  fd.append('file', file, file.name);
  const res = await fetch(base + '/api/files/upload', { method: 'POST', headers: headers(false), body: fd });
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

// POSTs body to path (GETs it when body is null) and calls onEvent(event)
// for each server-sent event until the stream ends; resolves then. An
// error answer before the stream throws ApiError.
export async function stream(path, body, onEvent, signal) {
  const res = await fetch(base + '/api' + path, body === null
    ? { method: 'GET', headers: headers(false), signal }
    : { method: 'POST', headers: headers(true), body: JSON.stringify(body), signal });
  if (!res.ok) throw new ApiError(res.status, await res.json().catch(() => null));
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const chunk = buf.slice(0, i);
      buf = buf.slice(i + 2);
      for (const line of chunk.split('\n')) {
        if (!line.startsWith('data:')) continue;
        try { onEvent(JSON.parse(line.slice(5).trim())); } catch (e) { /* a ping */ }
      }
    }
  }
}

// The inputs, sys.* and user.* of the address, each gzip + base64 as the
// embed script writes them (plain values are taken as they are).
export async function urlParams() {
  const out = { inputs: {}, sys: {}, user: {} };
  const q = new URLSearchParams(location.search);
  for (const [k, v] of q) {
    if (k === 'sendOnEnter') continue;
    let val = v;
    try {
      const bin = atob(v);
      const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
      const s = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
      val = await new Response(s).text();
    } catch (e) { val = v; }
    if (k.startsWith('sys.')) out.sys[k.slice(4)] = val;
    else if (k.startsWith('user.')) out.user[k.slice(5)] = val;
    else out.inputs[k] = val;
  }
  return out;
}
