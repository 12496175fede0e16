/*
 * page.js — what every view of the admin page shares: the API client
 * (found relative to the page, the admin token from sessionStorage), the
 * flash line and the dialog, the view counter (bumped on each render, so
 * late answers are dropped) and the error report.
 */
import { el, clear } from '../ui/dom.js';
import { client } from '../ui/api.js';
import { flasher, dialog } from '../ui/components.js';

export const API = new URL('../console/api/', location.href);
export const TOKEN = 'flowcgi.admin.token';
export const main = document.getElementById('main');
const flashBox = document.getElementById('flash');
export const nav = document.getElementById('nav');
/* view: bumped on each render, so late answers are dropped */
export const page = { view: 0 };

export const flash = flasher(flashBox);
export const ask = dialog(document.getElementById('dlg'));

/* ====== API ====== */

export function token() {
	return sessionStorage.getItem(TOKEN) || '';
}

export const api = client({
    base: API,
    headers: () => ({ Authorization: 'Bearer ' + token() }),
    onUnauthorized: () => onSignOut('The server refused the admin token ' +
	'(wrong or expired). Sign in again.'),
});

/* Reports an error unless it already sent us to the sign-in form. */
export function fail(e, where) {
	if (e && e.auth)
		return;
	const box = where || null;
	const msg = e && e.message ? e.message : String(e);
	if (box) {
		clear(box).append(el('div', { class: 'msg error',
		    role: 'alert', text: msg }));
		box.hidden = false;
	} else
		flash(msg, 'error');
}

export const enc = encodeURIComponent;


/* What a 401 does (the sign-in form) and how the current view is drawn
 * again: both set by admin.js, which imports every view (so no view
 * imports it back). */
let onSignOut = () => {};
let onRender = () => {};
export function setHooks(signOut, render) {
	onSignOut = signOut;
	onRender = render;
}

/* Draws the current view again. */
export function rerender() {
	onRender();
}
