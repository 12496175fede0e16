/*
 * components.js — small pieces every page shows: a flash line, a modal
 * dialog (confirm and prompt, keyboard friendly), badges, formatted times
 * and sizes, a download. Imports dom.js only.
 */
import { el, clear } from './dom.js';

/* flasher(box): returns flash(text, kind, ...extra), which shows one
 * message in box (kind 'error' is an alert; no text clears it). */
export function flasher(box) {
	return function flash(text, kind, ...extra) {
		clear(box);
		if (!text)
			return;
		box.append(el('div', {
			class: 'msg ' + (kind || ''),
			role: kind === 'error' ? 'alert' : null,
		}, text, extra));
	};
}

/*
 * dialog(dlg): dlg is a <dialog> holding #dlg-title, #dlg-body, #dlg-ok
 * and #dlg-cancel. Returns ask(o) -> a promise of the input's value
 * (o.input given: a prompt), true (a confirm) or null (cancelled).
 * o: {title, text, input, label, ok, danger}.
 */
export function dialog(dlg) {
	let gen = 0;
	const $ = (id) => dlg.querySelector('#' + id);
	$('dlg-cancel').addEventListener('click', () => dlg.close('cancel'));
	return function ask(o) {
		return new Promise((resolve) => {
			const body = clear($('dlg-body'));
			const ok = $('dlg-ok');
			let input = null;
			$('dlg-title').textContent = o.title;
			if (o.text)
				body.append(el('p', { text: o.text }));
			if (o.input !== undefined) {
				input = el('input', { type: 'text', id: 'dlg-input',
				    value: o.input, required: true });
				body.append(el('label', { for: 'dlg-input',
				    text: o.label || 'Name' }), input);
			}
			ok.textContent = o.ok || 'OK';
			ok.className = o.danger ? 'danger' : 'primary';
			dlg.returnValue = '';
			const my = ++gen;
			/* A close event is queued: one from an earlier showing
			 * may arrive after this one opened. */
			const onClose = () => {
				if (my === gen && dlg.open)
					return;
				dlg.removeEventListener('close', onClose);
				resolve(my !== gen || dlg.returnValue !== 'ok' ?
				    null : input ? input.value : true);
			};
			dlg.addEventListener('close', onClose);
			dlg.showModal();
			(input || (o.danger ? $('dlg-cancel') : ok)).focus();
		});
	};
}

export function fmtTime(s) {
	if (s === null || s === undefined || s === '')
		return '';
	const d = new Date(typeof s === 'number' ? s * 1000 : s);
	return isNaN(d) ? String(s) : d.toLocaleString();
}

export function fmtSize(n) {
	if (typeof n !== 'number')
		return '';
	if (n < 1024)
		return n + ' B';
	if (n < 1048576)
		return (n / 1024).toFixed(1) + ' KB';
	return (n / 1048576).toFixed(1) + ' MB';
}

/* A value as text: a string as it is, anything else as indented JSON. */
export function pretty(v) {
	if (v === undefined || v === null)
		return '—';
	return typeof v === 'string' ? v : JSON.stringify(v, null, 2);
}

export function badge(text, cls) {
	return el('span', { class: 'badge ' + (cls || text || '') },
	    text || '');
}

/* Offers blob for download as name. */
export function save(blob, name) {
	const url = URL.createObjectURL(blob);
	const a = el('a', { href: url, download: name, hidden: true });
	document.body.append(a);
	a.click();
	a.remove();
	setTimeout(() => URL.revokeObjectURL(url), 60000);
}

/* [label, input] with the label's for= the input's id (given one). */
export function field(label, input) {
	if (!input.id)
		input.id = 'f-' + Math.random().toString(36).slice(2);
	return [el('label', { for: input.id, text: label }), input];
}
