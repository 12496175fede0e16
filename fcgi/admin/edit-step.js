/*
 * edit-step.js — running one node of the draft alone, as Dify's "run this
 * step": the node's inputs, keyed as Dify's variable mapping keys them
 * (a code or template node's variable names, "#node.var#" for a
 * reference, "#context#", "#files#", "query"), prefilled from the node's
 * last execution (GET .../nodes/{id}/last-run) and from the outputs of
 * the last draft run, edited, then run through POST .../nodes/{id}/run
 * (the draft is saved first). The result (status, time, error, outputs)
 * is shown and handed back so the run panel colours the node.
 */
import { el, clear } from '../ui/dom.js';
import { pretty, badge } from '../ui/components.js';
import { api, enc, fail } from './page.js';

/* Dify's canRunBySingle (web/app/components/workflow/utils). */
const SINGLE = new Set(['llm', 'knowledge-retrieval', 'code',
    'template-transform', 'question-classifier', 'http-request', 'tool',
    'parameter-extractor', 'iteration', 'agent', 'document-extractor',
    'loop', 'start', 'if-else', 'variable-aggregator', 'assigner']);

/* canStep(node): whether Dify offers a single run of node. */
export function canStep(n) {
	const t = n && n.data && n.data.type;
	if (t === 'assigner' && n.parentId)
		return false;
	return SINGLE.has(t);
}

const isSel = (v) => Array.isArray(v) && v.length >= 2 &&
    v.every((s) => typeof s === 'string');

/*
 * inputKeys(node): [[key, selector]] in the order found, as the engine
 * (engine/run/single.c) and Dify map a node's inputs.
 */
export function inputKeys(n) {
	const map = new Map();
	const put = (k, sel) => {
		if (!map.has(k))
			map.set(k, sel);
	};
	const ref = (sel) => put('#' + sel.join('.') + '#', sel);
	const walk = (k, v, depth) => {
		if (depth > 32)
			return;
		if (typeof v === 'string') {
			for (const m of v.matchAll(/\{\{#([^#{}]+)#\}\}/g)) {
				const sel = m[1].split('.');
				if (sel.length >= 2)
					ref(sel);
			}
			return;
		}
		if (isSel(v)) {
			if (k === 'query' || k === 'query_variable_selector')
				put('query', v);
			else
				ref(v);
			return;
		}
		if (Array.isArray(v)) {
			v.forEach((x) => walk(null, x, depth + 1));
			return;
		}
		if (!v || typeof v !== 'object')
			return;
		if (typeof v.variable === 'string' && isSel(v.value_selector)) {
			put(v.variable, v.value_selector);
			return;
		}
		if (k === 'context' && isSel(v.variable_selector)) {
			if (v.enabled)
				put('#context#', v.variable_selector);
			return;
		}
		if (k === 'vision') {
			const s = v.configs && v.configs.variable_selector;
			if (v.enabled && isSel(s))
				put('#files#', s);
			return;
		}
		for (const [kk, x] of Object.entries(v))
			if (kk !== 'outputs' && kk !== 'default_value' &&
			    kk !== 'output_selector')
				walk(kk, x, depth + 1);
	};
	const d = (n && n.data) || {};
	if (d.type === 'start')
		return (d.variables || []).map((v) => [v.variable,
		    [n.id, v.variable]]);
	walk(null, d, 0);
	return [...map.entries()].filter(([, sel]) => sel[0] !== 'env' &&
	    sel[0] !== 'sys');
}

/* The value of selector sel in outs (node id -> outputs), or undefined. */
function lookup(outs, sel) {
	let v = outs.get(sel[0]);
	for (const p of sel.slice(1)) {
		if (v === null || typeof v !== 'object')
			return undefined;
		v = v[p];
	}
	return v;
}

/*
 * stepper(app, ed, save, outs, done): {el, open(nodeId)}. outs maps a
 * node id to its outputs in the last draft run; done(execution) is called
 * with each single step's answer.
 */
export function stepper(app, ed, save, outs, done) {
	const title = el('h4', { id: 'edit-step-title' });
	const fields = el('div', { id: 'edit-step-fields' });
	const go = el('button', { type: 'submit', class: 'primary',
	    id: 'edit-step-go', text: 'Run this node' });
	const status = el('p', { id: 'edit-step-status', role: 'status',
	    class: 'muted small' });
	const result = el('pre', { id: 'edit-step-outputs', hidden: true });
	let node = null, keys = [];
	const form = el('form', { id: 'edit-step-form', on: { submit: (ev) => {
		ev.preventDefault();
		run();
	} } }, fields, el('div', { class: 'row end' }, go));
	const box = el('section', { id: 'edit-step', class: 'edit-step',
	    hidden: true, 'aria-labelledby': 'edit-step-title' },
	    title, form, status, result);

	function field(key, i, v) {
		const id = 'edit-step-in-' + i;
		const text = v === undefined ? '' : typeof v === 'string' ?
		    v : JSON.stringify(v);
		return el('div', {}, el('label', { for: id, text: key }),
		    el('textarea', { id, rows: 1, 'data-key': key,
			'data-json': typeof v !== 'string' && v !== undefined ?
			'1' : null, text }));
	}

	async function open(id) {
		node = ed.node(id);
		if (!node || !canStep(node))
			return;
		keys = inputKeys(node);
		box.hidden = false;
		title.textContent = 'Run ' + ((node.data && node.data.title) ||
		    id) + ' alone';
		status.textContent = 'Reading its last run…';
		result.hidden = true;
		clear(fields);
		let last = null;
		try {
			last = await api('GET', 'apps/' + enc(app.id) +
			    '/workflows/draft/nodes/' + enc(id) + '/last-run');
		} catch (e) {
			if (e.status !== 404)
				fail(e);
		}
		const li = (last && last.inputs) || {};
		fields.append(...keys.map(([k, sel], i) => field(k, i,
		    li[k] !== undefined ? li[k] : lookup(outs, sel))));
		if (!keys.length)
			fields.append(el('p', { class: 'muted',
			    text: 'This node reads no variables.' }));
		status.textContent = last ? 'Prefilled with its last inputs.' :
		    'It has not run yet.';
		const f = fields.querySelector('textarea');
		(f || go).focus();
	}

	function read() {
		const inputs = {};
		for (const f of fields.querySelectorAll('textarea')) {
			let v = f.value;
			if (f.getAttribute('data-json'))
				try {
					v = JSON.parse(v);
				} catch (e) { /* kept as text */ }
			inputs[f.getAttribute('data-key')] = v;
		}
		return inputs;
	}

	async function run() {
		if (!node)
			return;
		go.disabled = true;
		status.textContent = 'Saving the draft…';
		try {
			if (!await save())
				return;
			status.textContent = 'Running…';
			const d = await api('POST', 'apps/' + enc(app.id) +
			    '/workflows/draft/nodes/' + enc(node.id) + '/run',
			    { json: { inputs: read() } });
			status.replaceChildren(badge(d.status), ' ' +
			    (Number(d.elapsed_time) || 0).toFixed(3) + ' s' +
			    (d.error ? ': ' + d.error : ''));
			status.setAttribute('data-status', d.status);
			result.hidden = false;
			result.textContent = pretty(d.outputs ?? null);
			done(d);
		} catch (e) {
			fail(e);
			status.textContent = 'Not run: ' + e.message;
			status.setAttribute('data-status', 'error');
		} finally {
			go.disabled = false;
		}
	}

	return { el: box, open };
}
