/*
 * app.js — one app: its tabs, the overview (the graph, the DSL summary)
 * and the API keys.
 */
import { el, clear } from '../ui/dom.js';
import { fmtTime, badge } from '../ui/components.js';
import { main, page, ask, token, api, fail, enc } from './page.js';
import { leakedList } from './apps.js';
import { draft, startVars, graphSection } from './draft.js';
import { appFiles } from './files.js';
import { webAppCard, copyText } from './webapp-card.js';
import { appRuns, appRun } from './runs.js';
import { appEdit } from './edit.js';

/* ====== One app ====== */

const TABS = [['overview', 'Overview'], ['edit', 'Edit'], ['files', 'Files'],
    ['keys', 'API keys'], ['runs', 'Runs'], ['run', 'Run']];

export async function renderApp(id, tab, arg) {
	const me = page.view;
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
	if (me !== page.view)
		return;
	head.append(el('h1', { tabindex: -1, id: 'app-title',
	    text: app.name }),
	    el('p', { class: 'row' }, badge(app.mode, 'mode'),
		badge(app.runtime_type)),
	    el('nav', { class: 'tabs', 'aria-label': 'App sections' },
		TABS.map(([t, label]) => el('a', {
		    href: '#/app/' + enc(id) + '/' + t, text: label,
		    'aria-current': t === tab ? 'page' : null }))));
	const fn = { overview: appOverview, edit: appEdit, files: appFiles,
	    keys: appKeys, runs: appRuns, run: appRun }[tab];
	try {
		await (fn || appOverview)(app, pane, me, arg);
	} catch (e) { fail(e, pane); }
}

/* The draft as JSON, or null for an app without a workflow. */
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

/* --- API keys --- */

async function appKeys(app, pane, me) {
	const base = 'apps/' + enc(app.id) + '/api-keys';
	const box = el('div', { id: 'keys' });
	const fresh = el('div', { id: 'new-key', 'aria-live': 'polite' });
	const reload = async () => {
		const res = await api('GET', base);
		if (me !== page.view)
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
