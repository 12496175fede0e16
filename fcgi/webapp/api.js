// api.js — the Web App's side of the web API: which page and share code
// the address names, the passport (kept per share code, as Dify's front
// end keeps it) and the headers Dify's front end sends, over the shared
// client and SSE reader of ../ui/api.js.

import { ApiError, client, readEvents } from '../ui/api.js';

export { ApiError };

// The mount prefix: everything before /chat/, /chatbot/, ... in the path.
const m = location.pathname.match(/^(.*?)\/(chat|chatbot|completion|workflow)\/([A-Za-z0-9]{16})\/?$/);
export const kind = m ? m[2] : '';
export const code = m ? m[3] : '';
export const base = m ? m[1] : '';
const apiBase = location.origin + base + '/api/';

let passport = '';

// Every call but the passport's: a 401 drops the stored passport (a reset
// code or a changed key), so the next start asks for a new one.
const api = client({
  base: apiBase,
  headers: () => (passport ? { 'X-App-Code': code, 'X-App-Passport': passport } : { 'X-App-Code': code }),
  onUnauthorized: () => logout(),
});

// Gets (or reuses) the passport; userId from the embed's sys.user_id. A
// 401 here is an answer to show (passcode_required), so no 401 hook.
export async function login(userId, passcode) {
  const key = 'passport-' + code;
  const keyUser = key + '-user';
  const stored = localStorage.getItem(key);
  if (stored && (localStorage.getItem(keyUser) || '') === (userId || '')) {
    passport = stored;
    return;
  }
  const get = client({ base: apiBase, headers: () => (passcode ? { 'X-App-Code': code, 'X-App-Passcode': passcode } : { 'X-App-Code': code }) });
  const body = await get('GET', 'passport' + (userId ? '?user_id=' + encodeURIComponent(userId) : ''));
  passport = body.access_token;
  localStorage.setItem(key, passport);
  localStorage.setItem(keyUser, userId || '');
}

export function logout() {
  localStorage.removeItem('passport-' + code);
  passport = '';
}

// call('GET', '/site') -> the parsed answer (null for a 204); body sent as
// JSON when given. Throws ApiError.
export function call(method, path, body) {
  return api(method, path.replace(/^\//, ''), body !== undefined ? { json: body } : {});
}

// Uploads a File (multipart "file") to /api/files/upload; Dify's file
// fields {id, name, size, extension, mime_type, ...}.
export function upload(file) {
  const fd = new FormData();
  fd.append('file', file, file.name);
  return api('POST', 'files/upload', { body: fd });
}

// The spoken answer of message id (POST /api/text-to-audio) as a Blob.
export async function speech(id) {
  const res = await api('POST', 'text-to-audio', { json: { message_id: id }, raw: true });
  return res.blob();
}

// The text of a recording (a Blob) through POST /api/audio-to-text.
export async function transcribe(blob) {
  const fd = new FormData();
  const ext = /ogg/.test(blob.type) ? 'ogg' : /mp4/.test(blob.type) ? 'm4a' : 'webm';
  fd.append('file', blob, 'recording.' + ext);
  return (await api('POST', 'audio-to-text', { body: fd })).text || '';
}

// A file at url kept as an upload (POST /api/remote-files/upload):
// Dify's file fields and url.
export function uploadUrl(url) {
  return api('POST', 'remote-files/upload', { json: { url } });
}

// POSTs body to path (GETs it when body is null) and calls onEvent(event)
// for each server-sent event until the stream ends; resolves then. An
// error answer before the stream throws ApiError.
export async function stream(path, body, onEvent, signal) {
  const res = await api(body === null ? 'GET' : 'POST', path.replace(/^\//, ''),
    body === null ? { raw: true, signal } : { json: body, raw: true, signal });
  await readEvents(res, onEvent);
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
