/*
 * flowcgi admin page. Plain script, no framework, nothing from elsewhere.
 *
 * - Every piece of text from the server goes in with textContent (el()
 *   below never parses HTML), so nothing it sends can become markup.
 * - The API is found relative to this page: the page is <prefix>/admin/,
 *   the API <prefix>/console/api/, whatever the prefix is.
 * - The admin token lives in sessionStorage; a 401 from any call forgets it
 *   and returns to the sign-in form.
 * - Views are chosen by the URL fragment (#/apps, #/app/<id>/<tab>,
 *   #/settings/sandbox, #/settings/models).
 */
'use strict';
(function () {
	const API = new URL('../console/api/', location.href);
	const TOKEN = 'flowcgi.admin.token';
	const main = document.getElementById('main');
	const flashBox = document.getElementById('flash');
	const nav = document.getElementById('nav');
	let view = 0;	/* bumped on each render: late answers are dropped */

	/* ====== DOM ====== */

	/* el('a', {href, class, on: {click: fn}}, 'text', child...): text only. */
	function el(tag, attrs, ...kids) {
		const e = document.createElement(tag);
		for (const [k, v] of Object.entries(attrs || {})) {
			if (v === undefined || v === null || v === false)
				continue;
			if (k === 'class')
				e.className = v;
			else if (k === 'text')
				e.textContent = v;
			else if (k === 'on')
				for (const [ev, fn] of Object.entries(v))
					e.addEventListener(ev, fn);
			else if (k in e && typeof v !== 'string')
				e[k] = v;
			else if (k === 'value')
				e.value = v;
			else
				e.setAttribute(k, v === true ? '' : String(v));
		}
		add(e, kids);
		return e;
	}

	window.FlowAdmin = { el };	/* graph.js builds with it too */

	function add(parent, kids) {
		for (const k of kids.flat(Infinity)) {
			if (k === null || k === undefined || k === false)
				continue;
			parent.append(k instanceof Node ? k : String(k));
		}
		return parent;
	}

	function clear(e) {
		while (e.firstChild)
			e.firstChild.remove();
		return e;
	}

	function flash(text, kind, ...extra) {
		clear(flashBox);
		if (!text)
			return;
		flashBox.append(el('div', {
			class: 'msg ' + (kind || ''),
			role: kind === 'error' ? 'alert' : null,
		}, text, extra));
	}

	function fmtTime(s) {
		if (s === null || s === undefined || s === '')
			return '';
		const d = new Date(typeof s === 'number' ? s * 1000 : s);
		return isNaN(d) ? String(s) : d.toLocaleString();
	}

	function fmtSize(n) {
		if (typeof n !== 'number')
			return '';
		if (n < 1024)
			return n + ' B';
		if (n < 1048576)
			return (n / 1024).toFixed(1) + ' KB';
		return (n / 1048576).toFixed(1) + ' MB';
	}

	function pretty(v) {
		if (v === undefined || v === null)
			return '—';
		return typeof v === 'string' ? v : JSON.stringify(v, null, 2);
	}

	function badge(text, cls) {
		return el('span', { class: 'badge ' + (cls || text || '') },
		    text || '');
	}

	function save(blob, name) {
		const url = URL.createObjectURL(blob);
		const a = el('a', { href: url, download: name, hidden: true });
		document.body.append(a);
		a.click();
		a.remove();
		setTimeout(() => URL.revokeObjectURL(url), 60000);
	}

	/* ====== Dialog (confirm and prompt), keyboard friendly ====== */

	const dlg = document.getElementById('dlg');
	let dlgGen = 0;
	document.getElementById('dlg-cancel').addEventListener('click',
	    () => dlg.close('cancel'));

	/* Resolves to the input's value (prompt), true (confirm) or null. */
	function ask(o) {
		return new Promise((resolve) => {
			const body = clear(document.getElementById('dlg-body'));
			const ok = document.getElementById('dlg-ok');
			let input = null;
			document.getElementById('dlg-title').textContent =
			    o.title;
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
			const gen = ++dlgGen;
			/* A close event is queued: one from an earlier showing
			 * may arrive after this one opened. */
			const onClose = () => {
				if (gen === dlgGen && dlg.open)
					return;
				dlg.removeEventListener('close', onClose);
				resolve(gen !== dlgGen || dlg.returnValue !== 'ok' ?
				    null : input ? input.value : true);
			};
			dlg.addEventListener('close', onClose);
			dlg.showModal();
			(input || (o.danger ?
			    document.getElementById('dlg-cancel') : ok)).focus();
		});
	}

	/* ====== API ====== */

	class ApiError extends Error {
		constructor(status, body, fallback) {
			super((body && (body.message || body.error)) ||
			    fallback || ('HTTP ' + status));
			this.status = status;
			this.body = body || {};
			this.code = this.body.code || '';
		}
	}

	function token() {
		return sessionStorage.getItem(TOKEN) || '';
	}

	/*
	 * api('GET', 'apps?page=1') -> parsed JSON (null for 204). o.json: a
	 * body to send as JSON; o.body + o.type: a raw body; o.raw: resolve
	 * to the Response itself. Throws ApiError; a 401 signs out first.
	 */
	async function api(method, path, o) {
		o = o || {};
		const headers = { Authorization: 'Bearer ' + token() };
		let body = o.body;
		if (o.json !== undefined) {
			headers['Content-Type'] = 'application/json';
			body = JSON.stringify(o.json);
		} else if (o.type)
			headers['Content-Type'] = o.type;
		let res;
		try {
			res = await fetch(new URL(path, API), {
			    method, headers, body, cache: 'no-store' });
		} catch (e) {
			throw new ApiError(0, null, 'the server cannot be ' +
			    'reached (' + e.message + ')');
		}
		if (res.status === 401) {
			signOut('The server refused the admin token (wrong or ' +
			    'expired). Sign in again.');
			const err = new ApiError(401, null, 'unauthorized');
			err.auth = true;
			throw err;
		}
		if (!res.ok) {
			let j = null;
			try {
				j = await res.json();
			} catch (e) { /* not JSON */ }
			throw new ApiError(res.status, j, res.statusText);
		}
		if (o.raw)
			return res;
		if (res.status === 204)
			return null;
		const ct = res.headers.get('Content-Type') || '';
		return ct.includes('json') ? res.json() : res.text();
	}

	/* Reports an error unless it already sent us to the sign-in form. */
	function fail(e, where) {
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

	const enc = encodeURIComponent;

	/* ====== Sign-in ====== */

	function signOut(why) {
		sessionStorage.removeItem(TOKEN);
		renderSignIn(why);
	}

	function renderSignIn(why) {
		++view;
		nav.hidden = true;
		flash('');
		const input = el('input', { type: 'password', id: 'token',
		    name: 'token', autocomplete: 'off', required: true,
		    spellcheck: 'false' });
		const err = el('div', { id: 'signin-error' });
		if (why)
			err.append(el('div', { class: 'msg error', role: 'alert',
			    text: why }));
		const form = el('form', { class: 'card', id: 'signin',
		    on: { submit: async (ev) => {
			ev.preventDefault();
			sessionStorage.setItem(TOKEN, input.value.trim());
			try {
				await api('GET', 'apps?page=1&limit=1');
			} catch (e) {
				if (!e.auth)
					fail(e, err);
				return;
			}
			if (!location.hash || location.hash === '#/signin')
				location.hash = '#/apps';
			else
				render();
		} } },
		    el('h1', { text: 'Sign in' }),
		    el('p', { class: 'muted', text: 'Enter the admin token ' +
			'(the command "flowcgi token" prints it).' }),
		    el('label', { for: 'token', text: 'Admin token' }), input,
		    el('div', { class: 'row end' }, el('button', {
			type: 'submit', class: 'primary', text: 'Sign in' })),
		    err);
		clear(main).append(el('div', { class: 'signin' }, form));
		input.focus();
	}

	document.getElementById('signout').addEventListener('click', () => {
		signOut('');
		flash('Signed out.', 'ok');
	});

	/* ====== Apps ====== */

	const MODES = ['workflow', 'advanced-chat', 'chat', 'agent-chat',
	    'completion'];

	async function renderApps(page) {
		const me = view;
		const list = el('div', { id: 'apps-list', 'aria-live': 'polite' },
		    el('p', { class: 'muted', text: 'Loading…' }));
		const name = el('input', { type: 'text', id: 'new-name',
		    required: true, maxlength: 40, autocomplete: 'off' });
		const mode = el('select', { id: 'new-mode' },
		    MODES.map((m) => el('option', { value: m, text: m })));
		const file = el('input', { type: 'file', id: 'import-file',
		    accept: '.yml,.yaml,.zip' });
		const create = el('form', { class: 'card', id: 'create-form',
		    on: { submit: async (ev) => {
			ev.preventDefault();
			try {
				const app = await api('POST', 'apps', { json: {
				    name: name.value, mode: mode.value } });
				flash('Created “' + app.name + '”.', 'ok');
				name.value = '';
				await loadApps(list, 1, me);
			} catch (e) { fail(e); }
		} } },
		    el('h2', { text: 'New app' }),
		    el('div', { class: 'row' },
			el('div', { class: 'grow' }, el('label', {
			    for: 'new-name', text: 'Name' }), name),
			el('div', { class: 'grow' }, el('label', {
			    for: 'new-mode', text: 'Mode' }), mode)),
		    el('div', { class: 'row end' }, el('button', {
			type: 'submit', class: 'primary', text: 'Create' })));
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
		if (me !== view)
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

	/* ====== One app ====== */

	const TABS = [['overview', 'Overview'], ['files', 'Files'],
	    ['keys', 'API keys'], ['runs', 'Runs'], ['run', 'Run']];

	async function renderApp(id, tab, arg) {
		const me = view;
		const pane = el('section', { id: 'pane', 'aria-live': 'polite' });
		const head = el('div', {}, el('p', {}, el('a', { href: '#/apps',
		    text: '← Apps' })));
		clear(main).append(head, pane);
		let app;
		try {
			app = await api('GET', 'apps/' + enc(id));
		} catch (e) {
			fail(e, pane);
			return;
		}
		if (me !== view)
			return;
		head.append(el('h1', { tabindex: -1, id: 'app-title',
		    text: app.name }),
		    el('p', { class: 'row' }, badge(app.mode, 'mode'),
			badge(app.runtime_type)),
		    el('nav', { class: 'tabs', 'aria-label': 'App sections' },
			TABS.map(([t, label]) => el('a', {
			    href: '#/app/' + enc(id) + '/' + t, text: label,
			    'aria-current': t === tab ? 'page' : null }))));
		const fn = { overview: appOverview, files: appFiles,
		    keys: appKeys, runs: appRuns, run: appRun }[tab];
		try {
			await (fn || appOverview)(app, pane, me, arg);
		} catch (e) { fail(e, pane); }
	}

	/* The draft as JSON, or null for an app without a workflow. */
	async function draft(app) {
		try {
			return await api('GET', 'apps/' + enc(app.id) +
			    '/workflows/draft');
		} catch (e) {
			if (e.status === 404 && e.code ===
			    'draft_workflow_not_exist')
				return null;
			throw e;
		}
	}

	function startVars(d) {
		const nodes = (d && d.graph && d.graph.nodes) || [];
		const s = nodes.find((n) => n.data && n.data.type === 'start');
		return (s && s.data.variables) || [];
	}

	async function appOverview(app, pane) {
		const d = await draft(app);
		if (app.description)
			pane.append(el('p', { text: app.description }));
		try {
			const deps = await api('GET', 'apps/imports/' +
			    enc(app.id) + '/check-dependencies');
			const l = leakedList(deps.leaked_dependencies);
			if (l)
				pane.append(l);
		} catch (e) {
			/* a server without the check: nothing to say */
		}
		const up = app.upgraded_from;
		if (up && up.app_id) {
			pane.append(el('p', { id: 'upgraded-from' },
			    'A sandboxed copy of ', el('a', { href: '#/app/' +
				enc(up.app_id), text: 'a classic app' }), '.'));
			const sk = Array.isArray(up.skipped_nodes) ?
			    up.skipped_nodes : [];
			if (sk.length)
				pane.append(el('h2', { text: 'Skipped by the ' +
				    'upgrade' }), el('ul', { id: 'upgrade-skipped' },
				    sk.map((k) => el('li', {}, el('strong',
					{ text: k.title || k.node_id }), ' (',
					el('code', { text: k.node_id }), '): ' +
					(k.reason || '')))));
		}
		if (!d) {
			pane.append(el('p', { class: 'muted', text: 'This ' +
			    app.mode + ' app has no workflow graph.' }));
			return;
		}
		graphSection(app, d, pane);
		const nodes = (d.graph && d.graph.nodes) || [];
		const edges = (d.graph && d.graph.edges) || [];
		const count = {};
		for (const n of nodes) {
			const t = (n.data && n.data.type) || n.type || '?';
			count[t] = (count[t] || 0) + 1;
		}
		const types = Object.keys(count).sort((x, y) =>
		    count[y] - count[x] || x.localeCompare(y));
		pane.append(el('h2', { text: 'DSL summary' }),
		    el('p', { id: 'dsl-totals', text: nodes.length +
			' nodes, ' + edges.length + ' edges, ' +
			(d.environment_variables || []).length +
			' environment variables, ' +
			(d.conversation_variables || []).length +
			' conversation variables' }),
		    el('div', { class: 'table-wrap' }, el('table',
			{ id: 'node-types' },
			el('thead', {}, el('tr', {}, el('th', { text:
			    'Node type' }), el('th', { text: 'Count' }))),
			el('tbody', {}, types.map((t) => el('tr', {},
			    el('td', { text: t }), el('td',
			    { text: String(count[t]) })))))));
		const vars = startVars(d);
		if (vars.length)
			pane.append(el('h2', { text: 'Start inputs' }),
			    el('ul', {}, vars.map((v) => el('li', {},
				el('code', { text: v.variable }), ' — ' +
				(v.label || '') + ' (' + v.type +
				(v.required ? ', required' : '') + ')'))));
	}

	/* --- the graph (graph.js), edited through the draft API --- */

	function graphSection(app, d, pane) {
		const box = el('section', { id: 'graph', 'aria-label':
		    'Graph' });
		pane.append(el('h2', { text: 'Graph' }), box);
		window.FlowGraph.show(box, d, { edit: { app, api, flash } });
	}

	/* A run's trace on the graph of the version that ran. */
	async function traceGraph(app, run, execs, before) {
		let d = null;
		if (run.version && run.version !== 'draft') {
			const vs = await api('GET', 'apps/' + enc(app.id) +
			    '/workflows?limit=100').catch(() => null);
			d = vs && vs.items.find((v) => v.id === run.workflow_id);
		}
		d = d || await draft(app);
		if (!d)
			return;
		const box = el('section', { id: 'trace-graph',
		    'aria-label': 'Trace on the graph' });
		before.before(el('h3', { text: 'Graph' }), box);
		window.FlowGraph.show(box, d, { trace: execs });
	}

	/* --- files --- */

	async function appFiles(app, pane, me) {
		const base = 'apps/' + enc(app.id) + '/assets/';
		const treeBox = el('div', { id: 'file-tree' });
		const folderSel = el('select', { id: 'upload-folder' });
		const mkSel = el('select', { id: 'mkdir-parent' });
		const file = el('input', { type: 'file', id: 'upload-file',
		    multiple: true });
		const dirName = el('input', { type: 'text', id: 'mkdir-name',
		    required: true, autocomplete: 'off' });
		const reload = async () => {
			const tree = await api('GET', base + 'tree');
			if (me !== view)
				return;
			const folders = [['', '/ (top)']];
			clear(treeBox).append(tree.children.length ?
			    fileList(tree.children, true, folders) :
			    el('p', { class: 'muted', text: 'No files yet.' }));
			for (const sel of [folderSel, mkSel]) {
				const keep = sel.value;
				add(clear(sel), folders.map(([v, t]) =>
				    el('option', { value: v, text: t })));
				sel.value = keep;
				if (sel.selectedIndex < 0)
					sel.selectedIndex = 0;
			}
		};
		const act = (fn) => async () => {
			try {
				await fn();
				await reload();
			} catch (e) { fail(e); }
		};
		function fileList(nodes, root, folders) {
			return el('ul', { class: 'tree' + (root ? ' root' : '') },
			    nodes.map((n) => {
				const isDir = n.node_type === 'folder';
				if (isDir)
					folders.push([n.id, n.path || n.name]);
				const btn = (t, fn, cls) => el('button', {
				    type: 'button', class: cls, text: t,
				    'aria-label': t + ' ' + n.name,
				    on: { click: act(fn) } });
				return el('li', { 'data-id': n.id },
				    el('div', { class: 'node' },
					el('span', { class: 'muted small',
					    text: isDir ? 'folder' : 'file' }),
					el('span', { class: 'name',
					    text: n.name }),
					isDir ? null : el('span', {
					    class: 'muted small',
					    text: fmtSize(n.size) }),
					isDir ? null : btn('Download', async () => {
						const r = await api('GET', base +
						    'files/' + enc(n.id) +
						    '/download', { raw: true });
						save(await r.blob(), n.name);
					}),
					btn('Rename', async () => {
						const v = await ask({ title:
						    'Rename ' + n.name, input:
						    n.name, label: 'New name',
						    ok: 'Rename' });
						if (v && v !== n.name)
							await api('POST', base +
							    'nodes/' + enc(n.id) +
							    '/rename', { json:
							    { name: v } });
					}),
					btn('Delete', async () => {
						if (await ask({ title: 'Delete ' +
						    n.name + '?', text: isDir ?
						    'The folder and everything ' +
						    'in it are deleted.' : null,
						    ok: 'Delete', danger: true }))
							await api('DELETE', base +
							    'nodes/' + enc(n.id));
					}, 'danger')),
				    n.skill ? el('div', { class: 'skill' },
					'Skill ', el('strong', {
					    text: n.skill.name || n.name }),
					n.skill.description ? ': ' +
					n.skill.description : '') : null,
				    isDir && n.children && n.children.length ?
					fileList(n.children, false, folders) :
					null);
			    }));
		}
		const upload = el('form', { class: 'card', id: 'upload-form',
		    on: { submit: async (ev) => {
			ev.preventDefault();
			if (!file.files.length) {
				flash('Choose a file to upload.', 'error');
				return;
			}
			try {
				for (const f of file.files) {
					const fd = new FormData();
					fd.append('file', f, f.name);
					if (folderSel.value)
						fd.append('parent_id',
						    folderSel.value);
					await api('POST', base + 'files' +
					    (replace.checked ? '?replace=1' : ''),
					    { body: fd });
				}
				flash('Uploaded ' + file.files.length +
				    ' file(s).', 'ok');
				file.value = '';
				await reload();
			} catch (e) { fail(e); }
		} } });
		const replace = el('input', { type: 'checkbox',
		    id: 'upload-replace' });
		add(upload, [el('h2', { text: 'Upload' }),
		    el('label', { for: 'upload-file', text: 'Files' }), file,
		    el('label', { for: 'upload-folder', text: 'Into folder' }),
		    folderSel,
		    el('label', { class: 'inline' }, replace,
			'Replace a file of the same name'),
		    el('div', { class: 'row end' }, el('button', {
			type: 'submit', class: 'primary', text: 'Upload' }))]);
		const mkdir = el('form', { class: 'card', id: 'mkdir-form',
		    on: { submit: async (ev) => {
			ev.preventDefault();
			try {
				await api('POST', base + 'folders', { json: {
				    name: dirName.value,
				    parent_id: mkSel.value || null } });
				dirName.value = '';
				await reload();
			} catch (e) { fail(e); }
		} } },
		    el('h2', { text: 'New folder' }),
		    el('label', { for: 'mkdir-name', text: 'Name' }), dirName,
		    el('label', { for: 'mkdir-parent', text: 'In folder' }),
		    mkSel,
		    el('div', { class: 'row end' }, el('button', {
			type: 'submit', text: 'Create folder' })));
		pane.append(el('h2', { text: 'Files' }), treeBox,
		    el('div', { class: 'row' }, el('div', { class: 'grow' },
			upload), el('div', { class: 'grow' }, mkdir)));
		await reload();
	}

	/* --- API keys --- */

	async function appKeys(app, pane, me) {
		const base = 'apps/' + enc(app.id) + '/api-keys';
		const box = el('div', { id: 'keys' });
		const fresh = el('div', { id: 'new-key', 'aria-live': 'polite' });
		const reload = async () => {
			const res = await api('GET', base);
			if (me !== view)
				return;
			clear(box);
			if (!res.data.length) {
				box.append(el('p', { class: 'muted',
				    text: 'No API keys.' }));
				return;
			}
			box.append(el('div', { class: 'table-wrap' },
			    el('table', { class: 'cards', id: 'keys-table' },
				el('thead', {}, el('tr', {}, ['Key', 'Created',
				    'Last used', ''].map((t) => el('th',
				    { text: t })))),
				el('tbody', {}, res.data.map((k) => el('tr',
				    { 'data-id': k.id },
				    el('td', { 'data-label': 'Key' },
					el('code', { class: 'key',
					    text: k.token })),
				    el('td', { 'data-label': 'Created',
					text: fmtTime(k.created_at) }),
				    el('td', { 'data-label': 'Last used',
					text: fmtTime(k.last_used_at) ||
					'never' }),
				    el('td', { class: 'actions' },
					el('button', { type: 'button',
					    class: 'danger', text: 'Revoke',
					    'aria-label': 'Revoke ' + k.token,
					    on: { click: async () => {
						try {
							if (!await ask({ title:
							    'Revoke this key?',
							    text: 'Clients ' +
							    'using it stop ' +
							    'working.', ok:
							    'Revoke', danger:
							    true }))
								return;
							await api('DELETE',
							    base + '/' +
							    enc(k.id));
							clear(fresh);
							await reload();
						} catch (e) { fail(e); }
					    } } }))))))));
		};
		pane.append(el('h2', { text: 'API keys' }),
		    el('p', { class: 'muted' }, 'Service API base URL: ',
			el('code', { id: 'api-base', text: app.api_base_url })),
		    el('div', { class: 'row' }, el('button', { type: 'button',
			class: 'primary', id: 'create-key',
			text: 'Create API key', on: { click: async () => {
			try {
				const k = await api('POST', base);
				const code = el('code', { class: 'key',
				    id: 'new-key-token', text: k.token });
				clear(fresh).append(el('div', { class: 'msg ok' },
				    el('p', { text: 'New key, shown only ' +
					'once:' }), code, ' ',
				    el('button', { type: 'button', text: 'Copy',
					id: 'copy-key', on: { click: () =>
					copyText(k.token, code) } })));
				await reload();
			} catch (e) { fail(e); }
		} } })), fresh, box);
		await reload();
		await webAppCard(app, pane, me);
	}

	/* --- the Web App: its site (enable, link, embed, settings, code) --- */

	async function webAppCard(app, pane, me) {
		const base = 'apps/' + enc(app.id);
		const card = el('section', { class: 'card', id: 'webapp-card',
		    'aria-labelledby': 'webapp-title' });
		const seg = app.mode === 'workflow' || app.mode === 'completion' ?
		    app.mode : 'chat';
		const render = (site) => {
			const root = new URL((site.app_base_url || '') + '/',
			    location.origin + '/').href.replace(/\/$/, '');
			const link = root + '/' + seg + '/' + site.code;
			const script = '<script>\n window.difyChatbotConfig = {\n' +
			    "  token: '" + site.code + "',\n  baseUrl: '" + root +
			    "',\n  inputs: {},\n  systemVariables: {},\n" +
			    '  userVariables: {},\n }\n</script>\n<script src="' +
			    root + '/embed.min.js" id="' + site.code +
			    '" defer></script>';
			const iframe = '<iframe src="' + root + '/chatbot/' +
			    site.code + '" style="width: 100%; height: 100%; ' +
			    'min-height: 700px" frameborder="0" ' +
			    'allow="microphone"></iframe>';
			const field = (name, label, value) => [
			    el('label', { for: 'site-' + name, text: label }),
			    el('input', { id: 'site-' + name, name, type: 'text', value:
				value || '' })];
			const snippet = (id, label, text) => {
				const ta = el('textarea', { id, readonly: true,
				    rows: 4, text });
				return [el('label', { for: id, text: label }), ta,
				    el('button', { type: 'button', text: 'Copy',
					on: { click: () => copyText(text, ta) } })];
			};
			const enabled = el('input', { type: 'checkbox',
			    id: 'site-enabled', checked: !!app.enable_site });
			enabled.addEventListener('change', async () => {
				try {
					await api('POST', base + '/site-enable',
					    { json: { enable_site: enabled.checked } });
					app.enable_site = enabled.checked;
					flash(enabled.checked ? 'The Web App is on.' :
					    'The Web App is off.', 'ok');
				} catch (e) { fail(e); }
			});
			const lang = el('select', { id: 'site-default_language',
			    name: 'default_language' }, [['en-US', 'English'],
			    ['zh-Hans', '简体中文']].map(([v, t]) => el('option',
			    { value: v, text: t, selected:
			    site.default_language === v })));
			const steps = el('input', { type: 'checkbox', id:
			    'site-show_workflow_steps', checked:
			    !!site.show_workflow_steps });
			const form = el('form', { id: 'site-form', on: { submit:
			    async (ev) => {
				ev.preventDefault();
				const f = new FormData(form);
				const json = { show_workflow_steps: steps.checked };
				for (const k of ['title', 'description',
				    'copyright', 'privacy_policy',
				    'custom_disclaimer', 'default_language'])
					json[k] = f.get(k) || (k === 'title' ?
					    app.name : null);
				if (f.get('passcode') !== '' || f.get('nopass'))
					json.passcode = f.get('nopass') ? '' :
					    f.get('passcode');
				try {
					render(await api('POST', base + '/site',
					    { json }));
					flash('Web App settings saved.', 'ok');
				} catch (e) { fail(e); }
			} } },
			    field('title', 'Title', site.title),
			    field('description', 'Description',
				site.description),
			    el('label', { for: 'site-default_language',
				text: 'Language' }), lang,
			    field('copyright', 'Copyright', site.copyright),
			    field('privacy_policy', 'Privacy policy URL',
				site.privacy_policy),
			    field('custom_disclaimer', 'Disclaimer',
				site.custom_disclaimer),
			    el('label', {}, steps, ' Show workflow steps'),
			    el('label', { for: 'site-passcode', text:
				'Passcode' + (site.passcode_set ? ' (set; ' +
				'type a new one to change it)' : ' (none)') }),
			    el('input', { id: 'site-passcode', name:
				'passcode', type: 'password', autocomplete:
				'new-password' }),
			    site.passcode_set ? el('label', {}, el('input', {
				type: 'checkbox', name: 'nopass', value: '1' }),
				' Remove the passcode') : null,
			    el('div', { class: 'row end' }, el('button', {
				type: 'submit', class: 'primary',
				text: 'Save' })));
			add(clear(card), [
			    el('h2', { id: 'webapp-title', text: 'Web App' }),
			    el('label', {}, enabled, ' Enabled: end users can ' +
				'open the link and use the app'),
			    el('p', {}, 'Link: ', el('a', { id: 'site-link',
				href: link, target: '_blank', rel: 'noopener',
				text: link })),
			    snippet('site-script', 'Embed as a chat bubble ' +
				'(Dify\'s snippet)', script),
			    snippet('site-iframe', 'Embed as an iframe', iframe),
			    form,
			    el('div', { class: 'row' }, el('button', {
				type: 'button', class: 'danger',
				id: 'site-reset', text: 'Reset the link',
				on: { click: async () => {
				try {
					if (!await ask({ title: 'Reset the ' +
					    'link?', text: 'The old link and ' +
					    'every embed using it stop ' +
					    'working.', ok: 'Reset',
					    danger: true }))
						return;
					render(await api('POST', base +
					    '/site/access-token-reset'));
				} catch (e) { fail(e); }
			    } } }))]);
		};
		try {
			const site = await api('GET', base + '/site');
			if (me !== view)
				return;
			render(site);
			pane.append(card);
		} catch (e) { fail(e); }
	}

	async function copyText(text, node) {
		try {
			await navigator.clipboard.writeText(text);
			flash('Copied to the clipboard.', 'ok');
		} catch (e) {
			/* No clipboard access: select it for Ctrl+C. */
			const r = document.createRange();
			r.selectNodeContents(node);
			const s = getSelection();
			s.removeAllRanges();
			s.addRange(r);
			flash('Selected: press Ctrl+C to copy.');
		}
	}

	/* --- runs --- */

	async function appRuns(app, pane, me, runId) {
		const base = 'apps/' + enc(app.id) + '/workflow-runs';
		const res = await api('GET', base + '?limit=50');
		if (me !== view)
			return;
		const trace = el('div', { id: 'trace' });
		pane.append(el('h2', { text: 'Runs' }));
		if (!res.data.length) {
			pane.append(el('p', { class: 'muted', text: 'No runs ' +
			    'yet: start one from the Run tab.' }));
			return;
		}
		pane.append(el('div', { class: 'table-wrap' },
		    el('table', { class: 'cards', id: 'runs-table' },
			el('thead', {}, el('tr', {}, ['Started', 'Status',
			    'Time', 'Tokens', 'Steps', ''].map((t) =>
			    el('th', { text: t })))),
			el('tbody', {}, res.data.map((r) => el('tr',
			    { 'data-id': r.id },
			    el('td', { 'data-label': 'Started',
				text: fmtTime(r.created_at) }),
			    el('td', { 'data-label': 'Status' },
				badge(r.status)),
			    el('td', { 'data-label': 'Time', text:
				typeof r.elapsed_time === 'number' ?
				r.elapsed_time.toFixed(3) + ' s' : '' }),
			    el('td', { 'data-label': 'Tokens',
				text: String(r.total_tokens || 0) }),
			    el('td', { 'data-label': 'Steps',
				text: String(r.total_steps || 0) }),
			    el('td', { class: 'actions' }, el('a', {
				class: 'button', text: 'Trace',
				href: '#/app/' + enc(app.id) + '/runs/' +
				enc(r.id) }))))))), trace);
		if (runId)
			await runTrace(base, runId, trace, app);
	}

	async function runTrace(base, runId, box, app) {
		const [run, nodes] = await Promise.all([
			api('GET', base + '/' + enc(runId)),
			api('GET', base + '/' + enc(runId) + '/node-executions'),
		]);
		const io = (title, v) => v === undefined || v === null ? null :
		    [el('h3', { text: title }), el('pre', { text: pretty(v) })];
		add(box, [el('h2', { tabindex: -1, id: 'trace-title',
		    text: 'Run ' + run.id }),
		    el('p', {}, badge(run.status), ' ',
			fmtTime(run.created_at), run.error ? ' — ' + run.error :
			''),
		    io('Inputs', run.inputs), io('Outputs', run.outputs),
		    el('h3', { text: 'Node trace' }),
		    el('div', { id: 'trace-nodes' }, nodes.data.map((n) =>
			el('details', { class: 'trace' },
			    el('summary', {}, (n.index !== undefined ? '#' +
				n.index + ' ' : '') + (n.title || n.node_id) +
				' (' + n.node_type + ') ', badge(n.status),
				typeof n.elapsed_time === 'number' ? ' ' +
				n.elapsed_time.toFixed(3) + ' s' : ''),
			    n.error ? el('div', { class: 'msg error',
				text: n.error }) : null,
			    io('Inputs', n.inputs),
			    nodeSandbox(n),
			    io('Process data', n.process_data),
			    io('Outputs', n.outputs))))]);
		await traceGraph(app, run, nodes.data,
		    document.getElementById('trace-nodes').previousSibling);
		document.getElementById('trace-title').focus();
	}

	/* --- run form with live events --- */

	function inputField(v) {
		const id = 'in-' + v.variable;
		const req = !!v.required;
		const lab = el('label', { for: id, text: (v.label || v.variable) +
		    (req ? ' *' : '') });
		let f;
		switch (v.type) {
		case 'paragraph':
			f = el('textarea', { id, name: v.variable, required: req,
			    maxlength: v.max_length || null });
			break;
		case 'select':
			f = el('select', { id, name: v.variable, required: req },
			    req ? null : el('option', { value: '', text: '' }),
			    (v.options || []).map((o) => el('option',
			    { value: o, text: o })));
			break;
		case 'number':
			f = el('input', { type: 'number', step: 'any', id,
			    name: v.variable, required: req });
			break;
		case 'checkbox':
			f = el('input', { type: 'checkbox', id,
			    name: v.variable });
			return el('label', { class: 'inline' }, f,
			    v.label || v.variable);
		case 'file':
		case 'file-list':
			return el('p', { class: 'muted', text: (v.label ||
			    v.variable) + ': file inputs are not supported ' +
			    'on this page; use the service API.' });
		default:
			f = el('input', { type: 'text', id, name: v.variable,
			    required: req, maxlength: v.max_length || null });
		}
		if (v.default !== undefined && v.default !== null &&
		    v.default !== '')
			f.value = v.default;
		return el('div', {}, lab, f);
	}

	function readInputs(form, vars) {
		const inputs = {};
		for (const v of vars) {
			const f = form.elements[v.variable];
			if (!f)
				continue;
			if (v.type === 'checkbox')
				inputs[v.variable] = f.checked;
			else if (v.type === 'number' && f.value !== '')
				inputs[v.variable] = Number(f.value);
			else if (f.value !== '' || v.required)
				inputs[v.variable] = f.value;
		}
		return inputs;
	}

	async function appRun(app, pane) {
		if (app.mode !== 'workflow' && app.mode !== 'advanced-chat') {
			pane.append(el('p', { class: 'muted', text: 'A ' +
			    app.mode + ' app runs through the service API ' +
			    '(create an API key).' }));
			return;
		}
		const d = await draft(app);
		const vars = startVars(d);
		const chat = app.mode === 'advanced-chat';
		const events = el('ol', { class: 'events', id: 'events' });
		const text = el('pre', { id: 'run-text', hidden: true });
		const result = el('div', { id: 'run-result' });
		const query = chat ? el('textarea', { id: 'run-query',
		    required: true }) : null;
		let conversation = '';
		const sandboxed = app.runtime_type === 'sandboxed';
		const sbox = el('div', { id: 'run-sandbox' });
		const btn = el('button', { type: 'submit', class: 'primary',
		    id: 'run-button', text: 'Run' });
		const form = el('form', { class: 'card', id: 'run-form',
		    on: { submit: async (ev) => {
			ev.preventDefault();
			btn.disabled = true;
			clear(events);
			clear(result);
			text.textContent = '';
			text.hidden = true;
			const body = { inputs: readInputs(form, vars) };
			if (chat) {
				body.query = query.value;
				body.conversation_id = conversation;
			}
			const sv = sandboxView(app, clear(sbox));
			try {
				await streamRun(app, chat, body, (e) => {
					if (e.conversation_id)
						conversation = e.conversation_id;
					showEvent(e, events, text, result);
					sv.event(e);
				});
				if (sandboxed)
					await sv.workspace();
			} catch (e) {
				fail(e, result);
			} finally {
				btn.disabled = false;
			}
		} } },
		    el('h2', { text: 'Run the draft' }),
		    vars.length ? vars.map(inputField) : el('p',
			{ class: 'muted', text: 'This app takes no inputs.' }),
		    chat ? [el('label', { for: 'run-query', text: 'Query *' }),
			query] : null,
		    el('div', { class: 'row end' }, sandboxed ? el('button', {
			type: 'button', id: 'reset-workspace',
			text: 'Reset workspace', on: { click: async () => {
			    try {
				    await api('POST', 'apps/' + enc(app.id) +
					'/sandbox/reset', { json: {} });
				    clear(sbox);
				    flash('The draft workspace is empty: the ' +
					'next run starts afresh.', 'ok');
			    } catch (e) { fail(e); }
			} } }) : null, btn));
		pane.append(form, el('h2', { text: 'Events' }), events, text,
		    result, sbox);
	}

	/* --- what a sandboxed run did: commands, workspace, files --- */

	const OUT_LONG = 12;	/* lines: a longer output starts collapsed */

	/* An output as a <details>, open unless it is long. */
	function outputBlock(text, cls) {
		const t = text === undefined || text === null ? '' :
		    String(text);
		const lines = t.replace(/\n$/, '').split('\n').length;
		const long = lines > OUT_LONG || t.length > 2000;
		return el('details', { class: cls, open: !long },
		    el('summary', { text: long ? 'Output (' + lines +
			' lines)' : 'Output' }), el('pre', { text: t }));
	}

	function isImage(f) {
		return f.type === 'image' || /^image\//.test(f.mime_type || '') ||
		    /\.(png|jpe?g|gif|webp|svg)$/i.test(f.filename || '');
	}

	/* An output file: a download, an image with its preview. */
	function fileItem(f) {
		const name = f.filename || 'file';
		return el('li', { class: 'outfile' },
		    el('div', { class: 'row' },
			el('a', { class: 'button', href: f.url, download: name,
			    text: 'Download ' + name }),
			el('span', { class: 'muted small', text: [f.mime_type,
			    fmtSize(f.size)].filter(Boolean).join(', ') })),
		    isImage(f) ? el('img', { class: 'preview', src: f.url,
			alt: name }) : null);
	}

	/* Without exit_code: the "[exit code N]" line an output ends with
	 * when the command did not exit 0 (older runs), else null. */
	function exitOf(code, output) {
		if (typeof code === 'number')
			return code;
		const tail = /\n\[exit code (\d+)\]$/.exec(output || '');
		return tail ? Number(tail[1]) : null;
	}

	/* One command of the Agent: "$ cmd", its exit code, its output. */
	function commandItem(input, output, code, status) {
		const failed = status === 'error' || (code !== null &&
		    code !== 0);
		return el('li', { class: 'cmd' },
		    el('div', { class: 'row' },
			el('code', { class: 'command', text: '$ ' +
			    (input || '') }),
			badge(code !== null ? 'exit ' + code : status ||
			    'done', failed ? 'failed' : 'succeeded')),
		    outputBlock(output, 'output'));
	}

	/*
	 * The commands and output files a finished node of a sandboxed run
	 * kept in its outputs (generation.tool_calls, files), for the
	 * trace; null when it has none.
	 */
	function nodeSandbox(n) {
		const out = n.outputs || {};
		const calls = ((out.generation || {}).tool_calls || [])
		    .filter((c) => c && c.name === 'bash');
		const files = (Array.isArray(out.files) ? out.files : [])
		    .filter((f) => f && f.url);
		if (!calls.length && !files.length)
			return null;
		const cmd = (c) => {
			let a = c.arguments;
			try {
				a = typeof a === 'string' ? JSON.parse(a) : a;
			} catch (e) { /* as it is */ }
			return a && typeof a === 'object' ? a.bash ||
			    a.command || JSON.stringify(a) : String(a || '');
		};
		return [calls.length ? [el('h3', { text: 'Commands' }),
		    el('ol', { class: 'cmds' }, calls.map((c) =>
			commandItem(cmd(c), c.output, exitOf(c.exit_code,
			c.output), c.status)))] : null,
		    files.length ? [el('h3', { text: 'Output files' }),
			el('ul', { class: 'outfiles' }, files.map(fileItem))] :
		    null];
	}

	/*
	 * Follows a run's events into box: each bash command of the Agent
	 * (agent_log "start", then its "success" / "error" entry, paired in
	 * order; an older run's finishing entry has no tool_input or
	 * exit_code), the files its nodes put out, and on workspace() the
	 * draft workspace's tree.
	 */
	function sandboxView(app, box) {
		const cmdList = el('ol', { class: 'cmds', id: 'run-commands' });
		const fileList = el('ul', { class: 'outfiles',
		    id: 'run-files' });
		const cmdHead = el('h2', { text: 'Commands', hidden: true });
		const fileHead = el('h2', { text: 'Output files',
		    hidden: true });
		const tree = el('div', { id: 'run-workspace' });
		const pending = [];
		const seen = new Set();
		box.append(cmdHead, cmdList, fileHead, fileList, tree);

		function bashEntry(d) {
			const data = d.data || {};
			return d.label === 'bash' || data.tool_name === 'bash';
		}

		function started(data) {
			const item = el('li', { class: 'cmd' },
			    el('div', { class: 'row' },
				el('code', { class: 'command',
				    text: '$ ' + (data.tool_input || '') }),
				badge('running')));
			pending.push({ input: data.tool_input, item });
			cmdHead.hidden = false;
			cmdList.append(item);
		}

		function finished(d) {
			const data = d.data || {};
			let i = pending.findIndex((p) => data.tool_input !==
			    undefined && p.input === data.tool_input);
			if (i < 0)
				i = 0;
			let p = pending.splice(i, 1)[0];
			if (!p) {
				started(data);
				p = pending.pop();
			}
			p.item.replaceWith(commandItem(p.input !== undefined ?
			    p.input : data.tool_input, data.output,
			    exitOf(data.exit_code, data.output), d.status));
		}

		function addFiles(list) {
			for (const f of Array.isArray(list) ? list : []) {
				if (!f || typeof f !== 'object' || !f.url ||
				    seen.has(f.url))
					continue;
				seen.add(f.url);
				fileHead.hidden = false;
				fileList.append(fileItem(f));
			}
		}

		function filesIn(v) {
			if (!v || typeof v !== 'object')
				return;
			for (const x of Object.values(v))
				if (Array.isArray(x))
					addFiles(x);
				else if (x && typeof x === 'object' &&
				    x.url && (x.filename || x.type))
					addFiles([x]);
		}

		function event(e) {
			const d = e.data || {};
			if (e.event === 'agent_log' && bashEntry(d)) {
				if (d.status === 'start')
					started(d.data || {});
				else if (d.status === 'success' ||
				    d.status === 'error')
					finished(d);
			} else if (e.event === 'node_finished' ||
			    e.event === 'workflow_finished')
				filesIn(d.outputs);
		}

		/* The draft workspace as the run left it, as a tree. */
		async function workspace() {
			const base = 'apps/' + enc(app.id) + '/sandbox/files';
			let list;
			try {
				list = await api('GET', base + '?recursive=true');
			} catch (e) {
				if (e.status !== 404)
					throw e;
				list = [];
			}
			const root = { kids: new Map() };
			for (const n of list) {
				let at = root;
				const parts = n.path.split('/');
				parts.forEach((part, i) => {
					if (!at.kids.has(part))
						at.kids.set(part, { name: part,
						    kids: new Map() });
					at = at.kids.get(part);
					if (i === parts.length - 1)
						at.node = n;
				});
			}
			const render = (t, cls) => el('ul', { class: cls },
			    [...t.kids.values()].map((k) => {
				const n = k.node || { is_dir: true,
				    path: k.name };
				return el('li', { 'data-path': n.path },
				    el('div', { class: 'node' },
					el('span', { class: 'muted small',
					    text: n.is_dir ? 'folder' :
					    'file' }),
					el('span', { class: 'name',
					    text: k.name }),
					n.is_dir ? null : el('span', {
					    class: 'muted small',
					    text: fmtSize(n.size) }),
					n.is_dir ? null : el('button', {
					    type: 'button', text: 'Download',
					    'aria-label': 'Download ' + n.path,
					    on: { click: async () => {
						try {
							const r = await api(
							    'GET', base +
							    '/download?path=' +
							    enc(n.path),
							    { raw: true });
							save(await r.blob(),
							    k.name);
						} catch (e) { fail(e); }
					    } } })),
				    k.kids.size ? render(k, 'tree') : null);
			    }));
			add(clear(tree), [el('h2', { text: 'Workspace' }),
			    list.length ? render(root, 'tree root') :
			    el('p', { class: 'muted', text: 'The ' +
				'workspace is empty.' })]);
		}

		return { event, workspace };
	}

	/* Posts the run and calls onEvent for each SSE event as it comes. */
	async function streamRun(app, chat, body, onEvent) {
		const res = await api('POST', 'apps/' + enc(app.id) +
		    (chat ? '/advanced-chat' : '') + '/workflows/draft/run',
		    { json: body, raw: true });
		const reader = res.body.getReader();
		const dec = new TextDecoder();
		let buf = '';
		for (;;) {
			const { done, value } = await reader.read();
			if (done)
				break;
			buf += dec.decode(value, { stream: true });
			let i;
			while ((i = buf.indexOf('\n\n')) >= 0) {
				const block = buf.slice(0, i);
				buf = buf.slice(i + 2);
				const data = block.split('\n').filter((l) =>
				    l.startsWith('data:')).map((l) =>
				    l.slice(5).trimStart()).join('\n');
				if (!data)
					continue;	/* ping */
				try {
					onEvent(JSON.parse(data));
				} catch (e) {
					onEvent({ event: 'unreadable',
					    data: { text: data } });
				}
			}
		}
	}

	function showEvent(e, events, text, result) {
		const d = e.data || {};
		let line = e.event;
		switch (e.event) {
		case 'text_chunk':
		case 'message':
		case 'agent_message':
			text.hidden = false;
			text.textContent += e.event === 'text_chunk' ? d.text ||
			    '' : e.answer || '';
			return;
		case 'node_started':
			line += ' · ' + (d.title || d.node_id) + ' (' +
			    d.node_type + ')';
			break;
		case 'node_finished':
			line += ' · ' + (d.title || d.node_id) + ' — ' +
			    d.status + (typeof d.elapsed_time === 'number' ?
			    ', ' + d.elapsed_time.toFixed(3) + ' s' : '') +
			    (d.error ? ': ' + d.error : '');
			break;
		case 'workflow_finished':
			line += ' — ' + d.status;
			add(clear(result), [el('h3', { text: 'Result' }),
			    el('p', {}, badge(d.status), ' ', (d.elapsed_time ||
				0).toFixed(3) + ' s, ' + (d.total_tokens || 0) +
				' tokens, ' + (d.total_steps || 0) + ' steps'),
			    d.error ? el('div', { class: 'msg error',
				text: d.error }) : null,
			    el('pre', { id: 'run-outputs',
				text: pretty(d.outputs) })]);
			break;
		case 'error':
			line += ' — ' + (e.message || e.code);
			break;
		case 'agent_log':
			line += ' · ' + (d.label || '') + (d.status ? ' ' +
			    d.status : '');
			break;
		default:
			if (d.title)
				line += ' · ' + d.title;
		}
		events.append(el('li', { 'data-event': e.event, text: line }));
	}

	/* ====== Settings: sandbox providers ====== */

	const SP = 'workspaces/current/sandbox-providers';
	const SP1 = 'workspaces/current/sandbox-provider/';

	function notAvailable(pane, what) {
		pane.append(el('div', { class: 'msg', id: 'not-available',
		    text: what + ' settings are not available on this server ' +
		    '(its API answered 404).' }));
	}

	/*
	 * A settings card's message area: out (the element), say(msg, kind)
	 * to show one, run(fn) to wrap a handler whose error is said there.
	 */
	function cardOut() {
		const out = el('div', { class: 'out', 'aria-live': 'polite' });
		const say = (msg, kind) => clear(out).append(el('div', {
		    class: 'msg ' + (kind || ''), role: kind === 'error' ?
		    'alert' : null, text: msg }));
		const run = (fn) => async () => {
			try { await fn(); } catch (e) {
				if (!e.auth)
					say(e.message, 'error');
			}
		};
		return { out, say, run };
	}

	/* A form field for one entry of a provider's config_schema. */
	function schemaField(prefix, f, value) {
		const id = prefix + '-' + f.name;
		const labelText = (f.label && (f.label.en_US || f.label)) ||
		    f.name;
		const lab = el('label', { for: id, text: String(labelText) +
		    (f.required ? ' *' : '') });
		const val = value !== undefined && value !== null ? value :
		    f.default !== undefined && f.default !== null ? f.default :
		    '';
		let input;
		if (f.type === 'boolean') {
			input = el('input', { type: 'checkbox', id,
			    name: f.name, checked: !!val });
			return el('label', { class: 'inline' }, input,
			    String(labelText));
		}
		if (f.type === 'select') {
			input = el('select', { id, name: f.name },
			    (f.options || []).map((o) => {
				const v = typeof o === 'object' ? o.value : o;
				const t = typeof o === 'object' ? (o.label &&
				    (o.label.en_US || o.label)) || o.value : o;
				return el('option', { value: String(v),
				    text: String(t) });
			    }));
			input.value = String(val);
		} else
			input = el('input', { type: f.type === 'secret-input' ?
			    'password' : f.type === 'number' ? 'number' : 'text',
			    id, name: f.name, value: String(val),
			    required: !!f.required, autocomplete: 'off',
			    placeholder: (f.placeholder && (f.placeholder.en_US ||
			    f.placeholder)) || null });
		const help = f.help && (f.help.en_US || f.help);
		return el('div', {}, lab, input, help ? el('div',
		    { class: 'muted small', text: String(help) }) : null);
	}

	function formValues(form, schema) {
		const out = {};
		for (const f of schema) {
			const i = form.elements[f.name];
			if (i)
				out[f.name] = f.type === 'boolean' ? i.checked :
				    i.value;
		}
		return out;
	}

	async function renderSandbox() {
		const me = view;
		const pane = el('section', { id: 'pane', class: 'providers' });
		clear(main).append(el('h1', { tabindex: -1,
		    text: 'Sandbox Provider' }), pane);
		let list;
		try {
			list = await api('GET', SP);
		} catch (e) {
			if (e.status === 404 || e.status === 405)
				notAvailable(pane, 'Sandbox provider');
			else
				fail(e, pane);
			return;
		}
		if (me !== view)
			return;
		if (!Array.isArray(list))
			list = list.data || [];
		if (!list.length)
			pane.append(el('p', { class: 'muted',
			    text: 'This server offers no sandbox providers.' }));
		for (const p of list)
			pane.append(sandboxCard(p));
	}

	function sandboxCard(p) {
		const type = p.provider_type;
		const schema = p.config_schema || [];
		const { out, say, run } = cardOut();
		const form = el('form', { on: { submit: (ev) => {
			ev.preventDefault();
			run(async () => {
				await api('POST', SP1 + enc(type) + '/config',
				    { json: { config: formValues(form,
				    schema) } });
				say('Saved: the connection works.', 'ok');
				renderSandboxSoon();
			})();
		} } },
		    schema.map((f) => schemaField('sp-' + type, f,
			(p.config || {})[f.name])),
		    el('div', { class: 'row end' },
			el('button', { type: 'button', text: 'Test connection',
			    on: { click: run(async () => {
				const r = await api('POST', SP1 + enc(type) +
				    '/test', { json: { config: formValues(form,
				    schema) } });
				say((r && r.message) || 'The connection works.',
				    'ok');
			    }) } }),
			p.is_active ? null : el('button', { type: 'button',
			    text: 'Activate', on: { click: run(async () => {
				await api('POST', SP1 + enc(type) + '/activate',
				    { json: {} });
				renderSandboxSoon();
			    }) } }),
			p.is_tenant_configured ? el('button', { type: 'button',
			    class: 'danger', text: 'Remove', on: { click:
			    run(async () => {
				if (!await ask({ title: 'Remove the ' + type +
				    ' configuration?', ok: 'Remove',
				    danger: true }))
					return;
				await api('DELETE', SP1 + enc(type) + '/config');
				renderSandboxSoon();
			    }) } }) : null,
			schema.length ? el('button', { type: 'submit',
			    class: 'primary', text: 'Save' }) : null));
		if (!schema.length)
			form.prepend(el('p', { class: 'muted', text:
			    'Nothing to configure.' }));
		return el('div', { class: 'card provider', 'data-type': type },
		    el('h2', {}, type + ' ', p.is_active ? badge('active') : null,
			p.is_tenant_configured ? badge('configured', 'cfg') :
			p.is_system_configured ? badge('system default', 'cfg') :
			null),
		    form, out);
	}

	function renderSandboxSoon() {
		if (location.hash === '#/settings/sandbox')
			render();
	}

	/* ====== Settings: model providers ====== */

	const MP = 'workspaces/current/model-providers';

	async function renderModels() {
		const me = view;
		const pane = el('section', { id: 'pane', class: 'providers' });
		clear(main).append(el('h1', { tabindex: -1,
		    text: 'Model Providers' }), pane);
		let res;
		try {
			res = await api('GET', MP);
		} catch (e) {
			if (e.status === 404 || e.status === 405)
				notAvailable(pane, 'Model provider');
			else
				fail(e, pane);
			return;
		}
		if (me !== view)
			return;
		const list = Array.isArray(res) ? res : res.data || [];
		for (const p of list)
			pane.append(modelCard(p, false));
		pane.append(modelCard({ name: '', protocol: 'openai',
		    base_url: '', api_key: '', models: [] }, true));
	}

	function modelCard(p, isNew) {
		const { out, say, run } = cardOut();
		const pre = 'mp-' + (isNew ? 'new' : p.name.replace(/[^\w-]/g,
		    '_'));
		const schema = [
			{ name: 'protocol', type: 'select', label: 'Protocol',
			    options: ['openai', 'anthropic'] },
			{ name: 'base_url', type: 'text-input',
			    label: 'Base URL', required: true },
			{ name: 'api_key', type: 'secret-input',
			    label: 'API key' },
			{ name: 'models', type: 'text-input', label: 'Models ' +
			    '(comma-separated; empty: any)' },
		];
		const vals = Object.assign({}, p, { models: (p.models || [])
		    .join(', ') });
		const name = isNew ? el('input', { type: 'text', id: pre +
		    '-name', required: true, autocomplete: 'off',
		    pattern: '[A-Za-z0-9._\\-]{1,64}|\\*' }) : null;
		const nameOf = () => isNew ? name.value : p.name;
		const body = (form) => {
			const v = formValues(form, schema);
			v.models = v.models.split(',').map((s) => s.trim())
			    .filter(Boolean);
			return v;
		};
		const form = el('form', { on: { submit: (ev) => {
			ev.preventDefault();
			run(async () => {
				await api('POST', MP + '/' + enc(nameOf()),
				    { json: body(form) });
				say('Saved.', 'ok');
				if (location.hash === '#/settings/models')
					render();
			})();
		} } },
		    isNew ? el('div', {}, el('label', { for: pre + '-name',
			text: 'Name *' }), name) : null,
		    schema.map((f) => schemaField(pre, f, vals[f.name])),
		    el('div', { class: 'row end' },
			isNew ? null : el('button', { type: 'button',
			    text: 'Test connection', on: { click:
			    run(async () => {
				const r = await api('POST', MP + '/' +
				    enc(nameOf()) + '/test', { json: {} });
				say('It answers' + (r.model ? ' (model ' +
				    r.model + ')' : '') + (r.text ? ': ' +
				    r.text : '.'), 'ok');
			    }) } }),
			!isNew && p.source === 'settings' ? el('button', {
			    type: 'button', class: 'danger', text: 'Remove',
			    on: { click: run(async () => {
				if (!await ask({ title: 'Remove ' + p.name +
				    '?', ok: 'Remove', danger: true }))
					return;
				await api('DELETE', MP + '/' + enc(p.name));
				if (location.hash === '#/settings/models')
					render();
			    }) } }) : null,
			el('button', { type: 'submit', class: 'primary',
			    text: isNew ? 'Add' : 'Save' })));
		return el('div', { class: 'card provider', 'data-name': p.name },
		    el('h2', {}, isNew ? 'Add a provider' : p.name + ' ',
			isNew ? null : badge(p.configured ? 'configured' :
			'not configured', p.configured ? 'active' : ''),
			isNew || !p.source ? null : el('span', {
			    class: 'muted small', text: ' ' + p.source })),
		    form, out);
	}

	/* ====== Settings: tools ====== */

	const TP = 'workspaces/current/tool-provider/builtin/';
	/* 1 when a provider has credentials to set */
	const needs = (p) => (p.credentials_schema || []).length > 0;

	async function renderTools() {
		const me = view;
		const pane = el('section', { id: 'pane', class: 'providers' });
		clear(main).append(el('h1', { tabindex: -1, text: 'Tools' }),
		    pane);
		let list, usage = {};
		try {
			list = await api('GET', 'workspaces/current/tools/builtin');
			usage = await api('GET',
			    'workspaces/current/tool-providers/usage');
		} catch (e) {
			if (e.status === 404 || e.status === 405)
				notAvailable(pane, 'Tool');
			else
				fail(e, pane);
			return;
		}
		if (me !== view)
			return;
		/* the providers to set up first, then the rest, by name */
		list.sort((a, b) => (needs(b) - needs(a)) ||
		    a.name.localeCompare(b.name));
		for (const p of list)
			pane.append(toolCard(p, usage[p.name] || []));
	}

	function toolCard(p, apps) {
		const schema = (p.credentials_schema || []).map((f) =>
		    Object.assign({}, f, { required: !!f.required }));
		const label = (p.label && (p.label.en_US || p.label)) || p.name;
		const { out, say, run } = cardOut();
		const pre = 'tp-' + p.name.replace(/[^\w-]/g, '_');
		const creds = p.team_credentials || {};
		const fields = schema.some((f) => f.name === 'base_url') ?
		    schema : schema.concat([{ name: 'base_url',
		    type: 'text-input', label: 'Base URL (optional: a ' +
		    'self-hosted server or another endpoint)' }]);
		const form = el('form', { on: { submit: (ev) => {
			ev.preventDefault();
			run(async () => {
				await api('POST', TP + enc(p.name) + '/update',
				    { json: { credentials: formValues(form,
				    fields) } });
				say('Saved.', 'ok');
			})();
		} } },
		    fields.map((f) => schemaField(pre, f, creds[f.name])),
		    el('div', { class: 'row end' },
			p.has_test === false ? null : el('button', {
			    type: 'button', text: 'Test', on: { click:
			    run(async () => {
				await api('POST', TP + enc(p.name) +
				    '/credentials/test', { json: {
				    credentials: formValues(form, fields) } });
				say('The provider answered.', 'ok');
			    }) } }),
			p.allow_delete ? el('button', { type: 'button',
			    class: 'danger', text: 'Remove', on: { click:
			    run(async () => {
				if (!await ask({ title: 'Remove the ' + label +
				    ' credentials?', ok: 'Remove',
				    danger: true }))
					return;
				await api('POST', TP + enc(p.name) + '/delete',
				    { json: {} });
				if (location.hash === '#/settings/tools')
					render();
			    }) } }) : null,
			el('button', { type: 'submit', class: 'primary',
			    text: 'Save' })));
		const tools = (p.tools || []).map((t) => t.name).join(', ');
		return el('div', { class: 'card provider', 'data-name': p.name },
		    el('h2', {}, label + ' ', p.unsupported ?
			badge('unsupported') : !needs(p) ? null :
			badge(p.is_team_authorization ? 'configured' :
			'needs credentials', p.is_team_authorization ? 'active' :
			'')),
		    p.unsupported ? el('p', { class: 'muted', text:
			'Not supported by flowcgi: ' + p.unsupported }) :
			el('p', { class: 'muted small', text: 'Tools: ' +
			(tools || 'none') }),
		    el('p', { class: 'small uses', text: apps.length ?
			'Used by: ' + apps.map((a) => a.name).join(', ') :
			'No app uses it.' }),
		    p.unsupported ? null : form, out);
	}

	/* What an import or a stored app names that will not run here. */
	function leakedList(leaked) {
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

	/* ====== Router ====== */

	function render() {
		const my = ++view;
		if (!token()) {
			renderSignIn('');
			return;
		}
		nav.hidden = false;
		const h = location.hash.replace(/^#\/?/, '');
		const parts = h.split('/').map((s) => {
			try { return decodeURIComponent(s); } catch (e) {
				return s;
			}
		});
		for (const a of nav.querySelectorAll('a'))
			a.setAttribute('aria-current', location.hash.startsWith(
			    a.getAttribute('href')) ? 'page' : 'false');
		let p;
		if (parts[0] === 'app' && parts[1])
			p = renderApp(parts[1], parts[2] || 'overview',
			    parts[3]);
		else if (parts[0] === 'settings' && parts[1] === 'sandbox')
			p = renderSandbox();
		else if (parts[0] === 'settings' && parts[1] === 'models')
			p = renderModels();
		else if (parts[0] === 'settings' && parts[1] === 'tools')
			p = renderTools();
		else
			p = renderApps(1);
		Promise.resolve(p).then(() => {
			if (my !== view)
				return;
			const h1 = main.querySelector('h1');
			const ae = document.activeElement;
			if (h1 && (!ae || ae === document.body || ae === main))
				h1.focus();
		}, (e) => fail(e));
	}

	window.addEventListener('hashchange', () => {
		flash('');
		render();
	});
	render();
})();
