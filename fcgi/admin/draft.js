/*
 * draft.js — an app's draft and the graph views on it: the editable
 * graph of the overview, a run's trace on the version that ran.
 */
import { el } from '../ui/dom.js';
import { show as showGraph } from './graph.js';
import { flash, api, enc } from './page.js';

export async function draft(app) {
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

export function startVars(d) {
	const nodes = (d && d.graph && d.graph.nodes) || [];
	const s = nodes.find((n) => n.data && n.data.type === 'start');
	return (s && s.data.variables) || [];
}

/* --- the graph (graph.js), edited through the draft API --- */

export function graphSection(app, d, pane) {
	const box = el('section', { id: 'graph', 'aria-label':
	    'Graph' });
	pane.append(el('h2', { text: 'Graph' }), box);
	showGraph(box, d, { edit: { app, api, flash } });
}

/* A run's trace on the graph of the version that ran. */
export async function traceGraph(app, run, execs, before) {
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
	showGraph(box, d, { trace: execs });
}
