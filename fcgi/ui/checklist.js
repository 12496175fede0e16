/*
 * checklist.js — Dify's checklist before publish, over the editor's state
 * (editor.js): a workflow without a start or an end (a chatflow: an
 * answer), nodes the start does not reach, required fields left empty, and
 * references to variables that are not upstream or not an output there.
 * Returns the problems; the page shows them and marks the nodes. Imports
 * editor.js's pure helpers (a node's outputs) only.
 */

import { innerOf, outputsOf } from './editor.js';

const REF = /\{\{#([^#{}]+)#\}\}/g;

/* The selectors and {{#...#}} references node data d reads. */
function reads(d) {
	const out = [];
	const sel = (s) => {
		if (Array.isArray(s) && s.length >= 2)
			out.push(s);
	};
	const text = (t) => {
		for (const m of String(t || '').matchAll(REF))
			out.push(m[1].split('.'));
	};
	switch (d.type) {
	case 'llm':
		for (const p of Array.isArray(d.prompt_template) ?
		    d.prompt_template : [])
			text(p.text);
		break;
	case 'if-else':
		for (const c of d.cases || [])
			for (const k of c.conditions || [])
				sel(k.variable_selector);
		break;
	case 'code':
	case 'template-transform':
		for (const v of d.variables || [])
			sel(v.value_selector);
		break;
	case 'variable-aggregator':
		for (const s of d.variables || [])
			sel(s);
		break;
	case 'answer':
		text(d.answer);
		break;
	case 'end':
		for (const o of d.outputs || [])
			sel(o.value_selector);
		break;
	case 'question-classifier':
	case 'knowledge-retrieval':
		sel(d.query_variable_selector);
		text(d.instruction);
		break;
	case 'parameter-extractor':
		sel(d.query);
		text(d.instruction);
		break;
	case 'document-extractor':
		sel(d.variable_selector);
		break;
	case 'list-operator':
		sel(d.variable);
		break;
	case 'iteration':
		sel(d.iterator_selector);
		break;
	case 'loop':
		for (const k of d.break_conditions || [])
			sel(k.variable_selector);
		break;
	case 'assigner':
		for (const it of d.items || []) {
			sel(it.variable_selector);
			if (it.input_type === 'variable')
				sel(it.value);
		}
		break;
	case 'http-request':
		text(d.url);
		text(d.headers);
		text(d.params);
		for (const b of (d.body && Array.isArray(d.body.data)) ?
		    d.body.data : [])
			text(b.value);
		break;
	case 'tool':
		for (const p of Object.values(d.tool_parameters || {}))
			if (p && p.type === 'variable')
				sel(p.value);
			else if (p)
				text(p.value);
		break;
	case 'agent': {
		const ap = d.agent_parameters || {};
		text(ap.instruction && ap.instruction.value);
		text(ap.query && ap.query.value);
		break;
	}
	}
	return out;
}

/* The required fields of node data d that are empty, as messages. */
function missing(d) {
	const m = [];
	switch (d.type) {
	case 'llm':
		if (!d.model || !d.model.provider || !d.model.name)
			m.push('the model is not set');
		break;
	case 'if-else':
		for (const [i, c] of (d.cases || []).entries()) {
			if (!(c.conditions || []).length)
				m.push((i ? 'ELIF ' + i : 'IF') + ' has no condition');
			for (const k of c.conditions || [])
				if (!k.variable_selector ||
				    !k.variable_selector.length)
					m.push('a condition has no variable');
		}
		break;
	case 'code':
		if (!String(d.code || '').trim())
			m.push('the code is empty');
		break;
	case 'template-transform':
		if (!String(d.template || '').trim())
			m.push('the template is empty');
		break;
	case 'variable-aggregator':
		if (!(d.variables || []).some((s) => s && s.length))
			m.push('no variable to aggregate');
		break;
	case 'answer':
		if (!String(d.answer || '').trim())
			m.push('the answer is empty');
		break;
	case 'end':
		for (const o of d.outputs || [])
			if (!o.variable || !o.value_selector ||
			    !o.value_selector.length)
				m.push('an output has no name or no variable');
		break;
	case 'question-classifier':
		if (!d.model || !d.model.provider || !d.model.name)
			m.push('the model is not set');
		if (!(d.query_variable_selector || []).length)
			m.push('the input variable is not set');
		if ((d.classes || []).some((c) => !String(c.name || '').trim()))
			m.push('a class has no name');
		break;
	case 'parameter-extractor':
		if (!d.model || !d.model.provider || !d.model.name)
			m.push('the model is not set');
		if (!(d.query || []).length)
			m.push('the input variable is not set');
		if (!(d.parameters || []).length)
			m.push('there is no parameter to extract');
		for (const p of d.parameters || [])
			if (!p.name || !p.description)
				m.push('a parameter has no name or no description');
		break;
	case 'knowledge-retrieval':
		if (!(d.query_variable_selector || []).length)
			m.push('the query variable is not set');
		if (!(d.dataset_ids || []).length)
			m.push('no knowledge base is chosen');
		break;
	case 'document-extractor':
		if (!(d.variable_selector || []).length)
			m.push('the input variable is not set');
		break;
	case 'list-operator':
		if (!(d.variable || []).length)
			m.push('the input variable is not set');
		break;
	case 'iteration':
		if (!(d.iterator_selector || []).length)
			m.push('the input variable is not set');
		if (!(d.output_selector || []).length)
			m.push('the output variable is not set');
		break;
	case 'assigner':
		for (const it of d.items || [])
			if (!(it.variable_selector || []).length)
				m.push('an operation has no variable');
		break;
	case 'http-request':
		if (!String(d.url || '').trim())
			m.push('the URL is empty');
		break;
	case 'tool':
		if (!d.provider_id || !d.tool_name)
			m.push('no tool is chosen');
		break;
	case 'agent': {
		const mv = ((d.agent_parameters || {}).model || {}).value;
		if (!mv || !mv.provider || !mv.model)
			m.push('the model is not set');
		break;
	}
	}
	for (const v of d.type === 'code' || d.type === 'template-transform' ?
	    d.variables || [] : [])
		if (!v.variable || !v.value_selector || !v.value_selector.length)
			m.push('an input has no name or no variable');
	return m;
}

/*
 * What a loop's break conditions can read ([{selector, label, type}]): its
 * loop variables, and the outputs of the nodes inside it.
 */
export function loopVars(ed, n) {
	const out = innerOf(n.data).filter(([k]) => k !== 'index').map(
	    ([k, type]) => ({ selector: [n.id, k], label: (n.data.title ||
	    n.id) + '.' + k, type }));
	for (const m of ed.nodes())
		if (m.parentId === n.id)
			for (const [k, type] of outputsOf(m.data || {}))
				out.push({ selector: [m.id, k], label:
				    (m.data.title || m.id) + '.' + k, type });
	return out;
}

/*
 * check(ed, mode): [{node (an id, or null for the whole graph), message}]
 * for the draft in ed; mode 'advanced-chat' wants an answer where a
 * workflow wants an end.
 */
export function check(ed, mode) {
	const out = [];
	const nodes = ed.nodes().filter((n) => n.data && n.data.type &&
	    !/-start$/.test(n.data.type));
	const start = nodes.find((n) => n.data.type === 'start');
	const last = mode === 'advanced-chat' ? 'answer' : 'end';
	if (!start)
		out.push({ node: null, message: 'There is no Start node.' });
	if (!nodes.some((n) => n.data.type === last))
		out.push({ node: null, message: 'There is no ' + (last ===
		    'end' ? 'End' : 'Answer') + ' node.' });
	for (const n of nodes) {
		const d = n.data;
		const name = d.title || n.id;
		/* inside a container: reached from its start node */
		const par = n.parentId && ed.node(n.parentId);
		const first = par && par.data && par.data.start_node_id;
		if (par && first && n.id !== first && d.type !== 'start' &&
		    !ed.upstream(n.id).includes(first))
			out.push({ node: n.id, message: name + ': not ' +
			    'connected to the start of ' + (par.data.title ||
			    par.id) + '.' });
		else if (!par && d.type !== 'start' && start &&
		    !ed.upstream(n.id).includes(start.id))
			out.push({ node: n.id, message: name + ': not ' +
			    'connected to the Start node.' });
		for (const m of missing(d))
			out.push({ node: n.id, message: name + ': ' + m + '.' });
		const can = new Set(ed.variables(n.id).map((v) =>
		    v.selector.join('.')));
		/* a loop's break conditions read its own variables and
		 * what its nodes output */
		if (d.type === 'loop')
			for (const v of loopVars(ed, n))
				can.add(v.selector.join('.'));
		for (const s of reads(d)) {
			/* {{#context#}}: the LLM's context block */
			if (s[0] === 'sys' || s[0] === 'conversation' ||
			    (s.length === 1 && s[0] === 'context'))
				continue;
			if (!can.has(s.slice(0, 2).join('.')))
				out.push({ node: n.id, message: name + ': reads ' +
				    s.join('.') + ', which is not an output ' +
				    'upstream of it.' });
		}
	}
	return out;
}
