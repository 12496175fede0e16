/*
 * edit-run.js — the Edit tab's run panel: the start form of the draft
 * being edited (its start node's fields, a chatflow's query), a run of the
 * draft through the console's draft-run route (saved first), and the nodes
 * on the graph coloured as their events stream in (running, then
 * succeeded, failed, exception), each node's inputs, outputs, time and
 * error listed as it finishes, then the run's status and outputs.
 *
 * A node Dify runs alone gets "Run this node" in the list and in its
 * settings panel (edit-step.js): its inputs prefilled from its last run,
 * the result shown and coloured on the graph as a run's node is.
 */
import { el, clear } from '../ui/dom.js';
import { pretty, badge } from '../ui/components.js';
import { fail } from './page.js';
import { inputField, readInputs, streamRun } from './runs.js';
import { stepper, canStep } from './edit-step.js';

/*
 * runner(app, ed, nodeLayer, save): {el, paint()}. save() resolves once
 * the draft is saved (false: it could not be). paint() puts the run's
 * states on the node group's drawing again (the editor draws it anew on
 * each change); step(id) opens the single run of node id, canStep(node)
 * says whether Dify offers one.
 */
export function runner(app, ed, nodeLayer, save) {
	const chat = app.mode === 'advanced-chat';
	const states = new Map();	/* node id -> {status, time} */
	const fields = el('div', { id: 'edit-run-fields' });
	const query = chat ? el('textarea', { id: 'edit-run-query', rows: 2,
	    'aria-label': 'Query' }) : null;
	const btn = el('button', { type: 'submit', class: 'primary',
	    id: 'edit-run-go', text: 'Run the draft' });
	const status = el('p', { id: 'edit-run-status', role: 'status',
	    class: 'muted small' });
	const answer = el('pre', { id: 'edit-run-answer', hidden: true });
	const nodes = el('ol', { id: 'edit-run-nodes', class: 'events' });
	const outputs = el('pre', { id: 'edit-run-outputs', hidden: true });
	const outs = new Map();	/* node id -> its outputs, last seen */
	const steps = stepper(app, ed, save, outs, (d) => {
		states.set(d.node_id, { status: d.status,
		    time: Number(d.elapsed_time) || 0 });
		if (d.outputs)
			outs.set(d.node_id, d.outputs);
		paint();
	});
	const vars = () => {
		const s = ed.nodes().find((n) => n.data && n.data.type ===
		    'start');
		return (s && s.data.variables) || [];
	};
	const form = el('form', { id: 'edit-run-form', on: { submit:
	    (ev) => {
		ev.preventDefault();
		go();
	    } } }, fields, chat ? el('label', { for: 'edit-run-query',
		text: 'Query' }) : null, query,
	    el('div', { class: 'row end' }, btn));
	const box = el('details', { class: 'card edit-run', id: 'edit-run',
	    on: { toggle: () => {
		if (box.open)
			clear(fields).append(...vars().map(inputField));
	    } } },
	    el('summary', { text: 'Run' }), form, status, answer, nodes,
	    outputs, steps.el);

	function step(id) {
		box.open = true;
		steps.open(id);
	}

	function paint() {
		for (const g of nodeLayer.children) {
			const id = g.getAttribute('data-id');
			const s = states.get(id);
			g.setAttribute('class', (g.getAttribute('class') || '')
			    .replace(/ ?st-\S+/g, '') + (s ? ' st-' +
			    s.status : ''));
			const t = g.querySelector('.gstat');
			if (t)
				t.textContent = !s ? '' : s.status === 'running' ?
				    '…' : (s.time || 0).toFixed(3) + ' s';
		}
	}

	function finished(d) {
		const time = Number(d.elapsed_time) || 0;
		const prev = states.get(d.node_id);
		/* in an iteration a node runs once an item */
		states.set(d.node_id, { status: d.status, time: time +
		    (prev && prev.status !== 'running' ? prev.time : 0) });
		if (d.outputs)
			outs.set(d.node_id, d.outputs);
		/* a container's start node has nothing to show */
		if (/-start$/.test(d.node_type || ''))
			return;
		const n = ed.node(d.node_id);
		nodes.append(el('li', { 'data-node': d.node_id,
		    'data-status': d.status }, n && canStep(n) ?
		    el('button', { type: 'button', class: 'small step-node',
			'aria-label': 'Run ' + (d.title || d.node_id) +
			' alone', text: 'Run this node', on: { click: () =>
			step(d.node_id) } }) : null,
		    el('details', {}, el('summary', {}, badge(d.status), ' ' +
			(d.title || d.node_id) + ' · ' + time.toFixed(3) +
			' s' + (d.error ? ': ' + d.error : '')),
			el('h4', { text: 'Inputs' }),
			el('pre', { class: 'n-inputs',
			    text: pretty(d.inputs ?? null) }),
			el('h4', { text: 'Outputs' }),
			el('pre', { class: 'n-outputs',
			    text: pretty(d.outputs ?? null) }))));
	}

	function onEvent(e) {
		const d = e.data || {};
		switch (e.event) {
		case 'node_started':
			states.set(d.node_id, { status: 'running', time:
			    (states.get(d.node_id) || {}).time || 0 });
			break;
		case 'node_finished':
			finished(d);
			break;
		case 'message':
		case 'agent_message':
			answer.hidden = false;
			answer.textContent += e.answer || '';
			return;
		case 'text_chunk':
			if (!chat) {
				answer.hidden = false;
				answer.textContent += d.text || '';
			}
			return;
		case 'workflow_finished':
			status.replaceChildren(badge(d.status), ' ' +
			    (Number(d.elapsed_time) || 0).toFixed(3) + ' s' +
			    (d.error ? ': ' + d.error : ''));
			status.setAttribute('data-status', d.status);
			outputs.hidden = false;
			outputs.textContent = pretty(d.outputs ?? null);
			break;
		case 'error':
			status.textContent = 'Error: ' + (e.message || e.code);
			status.setAttribute('data-status', 'error');
			break;
		default:
			return;
		}
		paint();
	}

	async function go() {
		btn.disabled = true;
		states.clear();
		outs.clear();
		clear(nodes);
		answer.textContent = '';
		answer.hidden = outputs.hidden = true;
		status.removeAttribute('data-status');
		status.textContent = 'Saving the draft…';
		paint();
		try {
			if (!await save())
				return;
			status.textContent = 'Running…';
			const body = { inputs: readInputs(form, vars()) };
			if (chat)
				body.query = query.value;
			await streamRun(app, chat, body, onEvent);
		} catch (e) {
			fail(e);
			status.textContent = 'Not run.';
		} finally {
			btn.disabled = false;
		}
	}

	return { el: box, paint, step, canStep };
}
