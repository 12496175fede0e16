/*
 * runs.js — an app's runs (the list, one run's trace) and the run form
 * with its live events.
 */
import { el, add, clear } from '../ui/dom.js';
import { readEvents } from '../ui/api.js';
import { fmtTime, pretty, badge } from '../ui/components.js';
import { page, flash, api, fail, enc } from './page.js';
import { draft, startVars, traceGraph } from './draft.js';
import { nodeSandbox, sandboxView } from './sandbox-view.js';

/* --- runs --- */

export async function appRuns(app, pane, me, runId) {
	const base = 'apps/' + enc(app.id) + '/workflow-runs';
	const res = await api('GET', base + '?limit=50');
	if (me !== page.view)
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

export function inputField(v) {
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

export function readInputs(form, vars) {
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

export async function appRun(app, pane) {
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

export async function streamRun(app, chat, body, onEvent) {
	const res = await api('POST', 'apps/' + enc(app.id) +
	    (chat ? '/advanced-chat' : '') + '/workflows/draft/run',
	    { json: body, raw: true });
	await readEvents(res, onEvent);
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
