/*
 * apps.js — the list of apps: create (create.js's form: blank or from a
 * template), import (a DSL or a bundle), copy, export, upgrade, delete.
 */
import { el, clear } from '../ui/dom.js';
import { ApiError } from '../ui/api.js';
import { fmtTime, badge, save } from '../ui/components.js';
import { main, page, flash, ask, api, fail, enc } from './page.js';
import { createForm } from './create.js';

/* ====== Apps ====== */

export async function renderApps(page) {
	const me = page.view;
	const list = el('div', { id: 'apps-list', 'aria-live': 'polite' },
	    el('p', { class: 'muted', text: 'Loading…' }));
	const file = el('input', { type: 'file', id: 'import-file',
	    accept: '.yml,.yaml,.zip' });
	const create = createForm(() => loadApps(list, 1, me));
	const imp = el('form', { class: 'card', id: 'import-form',
	    on: { submit: async (ev) => {
		ev.preventDefault();
		if (!file.files.length) {
			flash('Choose a .yml or .zip file first.',
			    'error');
			file.focus();
			return;
		}
		try {
			await importFile(file.files[0]);
			file.value = '';
			await loadApps(list, 1, me);
		} catch (e) { fail(e); }
	} } },
	    el('h2', { text: 'Import' }),
	    el('label', { for: 'import-file',
		text: 'Dify DSL (.yml) or bundle (.zip)' }), file,
	    el('div', { class: 'row end' }, el('button', {
		type: 'submit', text: 'Import' })));
	clear(main).append(el('h1', { tabindex: -1, text: 'Apps' }),
	    list, el('div', { class: 'row' },
		el('div', { class: 'grow' }, create),
		el('div', { class: 'grow' }, imp)));
	await loadApps(list, page || 1, me);
}

async function loadApps(list, page, me) {
	let res;
	try {
		res = await api('GET', 'apps?page=' + page +
		    '&limit=20');
	} catch (e) {
		fail(e, list);
		return;
	}
	if (me !== page.view)
		return;
	clear(list);
	if (!res.data.length) {
		list.append(el('p', { class: 'muted', id: 'no-apps',
		    text: 'No apps yet: create one or import a DSL ' +
		    'file.' }));
		return;
	}
	const rows = res.data.map((a) => el('tr', { 'data-id': a.id },
	    el('td', { 'data-label': 'Name' },
		el('a', { href: '#/app/' + enc(a.id), class: 'app-name',
		    text: a.name }),
		a.description ? el('div', { class: 'muted small',
		    text: a.description }) : null),
	    el('td', { 'data-label': 'Mode', class: 'mode',
		text: a.mode }),
	    el('td', { 'data-label': 'Runtime', class: 'runtime' },
		badge(a.runtime_type)),
	    el('td', { 'data-label': 'Updated',
		text: fmtTime(a.updated_at) }),
	    el('td', { class: 'actions' }, appActions(a, list, page,
		me))));
	list.append(el('div', { class: 'table-wrap' },
	    el('table', { class: 'cards', id: 'apps-table' },
		el('caption', { class: 'muted small', text: res.total +
		    (res.total === 1 ? ' app' : ' apps') }),
		el('thead', {}, el('tr', {}, ['Name', 'Mode', 'Runtime',
		    'Updated', 'Actions'].map((t) => el('th',
		    { scope: 'col', text: t })))),
		el('tbody', {}, rows))));
	const pages = Math.max(1, Math.ceil(res.total / res.limit));
	if (pages > 1)
		list.append(el('div', { class: 'row' },
		    el('button', { type: 'button', text: 'Previous',
			disabled: page <= 1, on: { click: () =>
			loadApps(list, page - 1, me) } }),
		    el('span', { text: 'Page ' + page + ' of ' +
			pages }),
		    el('button', { type: 'button', text: 'Next',
			disabled: !res.has_more, on: { click: () =>
			loadApps(list, page + 1, me) } })));
}

function appActions(a, list, page, me) {
	const reload = () => loadApps(list, page, me);
	const b = (text, fn, cls) => el('button', { type: 'button',
	    class: cls, text, 'aria-label': text + ' ' + a.name,
	    on: { click: async () => {
		try { await fn(); } catch (e) { fail(e); }
	} } });
	const canUpgrade = a.runtime_type !== 'sandboxed' &&
	    (a.mode === 'workflow' || a.mode === 'advanced-chat');
	return [
		b('Export', () => exportApp(a)),
		b('Copy', async () => {
			const c = await api('POST', 'apps/' + enc(a.id) +
			    '/copy', { json: {} });
			flash('Copied as “' + c.name + '”.', 'ok');
			await reload();
		}),
		canUpgrade ? b('Upgrade', () => upgradeApp(a, reload))
		    : null,
		b('Delete', async () => {
			if (!await ask({ title: 'Delete “' + a.name +
			    '”?', text: 'The app, its files, API keys ' +
			    'and runs are deleted. This cannot be ' +
			    'undone.', ok: 'Delete', danger: true }))
				return;
			await api('DELETE', 'apps/' + enc(a.id));
			flash('Deleted “' + a.name + '”.', 'ok');
			await reload();
		}, 'danger'),
	];
}

async function importFile(f) {
	let imp;
	const zip = /\.zip$/i.test(f.name);
	try {
		imp = zip ? await api('POST', 'apps/imports-bundle',
		    { body: f, type: 'application/zip' }) :
		    await api('POST', 'apps/imports', { json: {
		    mode: 'yaml-content', yaml_content: await f.text() } });
	} catch (e) {
		if (e.body && e.body.status === 'failed')
			throw new ApiError(e.status, null, 'Import ' +
			    'failed: ' + (e.body.error || 'unknown'));
		throw e;
	}
	if (imp.status === 'pending') {
		const go = await ask({ title: 'Import a different ' +
		    'DSL version?', text: 'The file is DSL version ' +
		    imp.imported_dsl_version + '; this server writes ' +
		    imp.current_dsl_version + '. Import it anyway?',
		    ok: 'Import' });
		if (!go) {
			flash('Import cancelled.');
			return;
		}
		imp = await api('POST', 'apps/imports/' + enc(imp.id) +
		    '/confirm', { json: {} });
	}
	flash('Imported ' + f.name + ' (' + imp.status + '). ', 'ok',
	    el('a', { href: '#/app/' + enc(imp.app_id),
		text: 'Open it' }), leakedList(imp.leaked_dependencies));
}

async function exportApp(a) {
	if (a.runtime_type === 'sandboxed') {
		const res = await api('GET', 'apps/' + enc(a.id) +
		    '/bundle', { raw: true });
		const cd = res.headers.get('Content-Disposition') || '';
		const m = /filename\*=UTF-8''([^;]+)/.exec(cd);
		save(await res.blob(), m ? decodeURIComponent(m[1]) :
		    a.name + '.zip');
	} else {
		const j = await api('GET', 'apps/' + enc(a.id) +
		    '/export');
		save(new Blob([j.data], { type: 'application/yaml' }),
		    a.name.replace(/[\\/:*?"<>|]+/g, '_') + '.yml');
	}
	flash('Exported “' + a.name + '”.', 'ok');
}

async function upgradeApp(a, reload) {
	if (!await ask({ title: 'Upgrade “' + a.name + '”?',
	    text: 'A sandboxed copy is made: agent nodes become LLM ' +
	    'nodes with computer use. The original stays as it is.',
	    ok: 'Upgrade' }))
		return;
	const r = await api('POST', 'apps/' + enc(a.id) +
	    '/upgrade-runtime', { json: {} });
	if (r.result !== 'success') {
		flash('Not upgraded: ' + r.result.replace(/_/g, ' ') +
		    '.', 'error');
		return;
	}
	const n = (x) => Array.isArray(x) ? x.length : (x || 0);
	const sk = (r.skipped_nodes || []).map((k) =>
	    (k.title || k.node_id) + ': ' + (k.reason || ''));
	flash('Upgraded to the sandboxed runtime: ' +
	    n(r.converted_agents) + ' agent node(s) converted, ' +
	    n(r.skipped_agents) + ' skipped' + (sk.length ? ' (' +
	    sk.join('; ') + ')' : '') + '. ', 'ok',
	    el('a', { href: '#/app/' + enc(r.new_app_id),
		text: 'Open the new app' }));
	await reload();
}

export function leakedList(leaked) {
	if (!leaked || !leaked.length)
		return null;
	return el('div', { class: 'msg warn leaked', role: 'status' },
	    el('strong', { text: 'These tools will not run here:' }),
	    el('ul', {}, leaked.map((d) => el('li', { text: d.message +
		(d.nodes && d.nodes.length ? ' (nodes ' +
		d.nodes.join(', ') + ')' : '') }))),
	    leaked.some((d) => d.reason === 'needs_credentials') ?
		el('a', { href: '#/settings/tools',
		text: 'Set credentials in Settings > Tools' }) : null);
}
