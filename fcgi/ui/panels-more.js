/*
 * panels-more.js — the panels of the node types past the first few:
 * question-classifier (its classes are its handles), parameter-extractor,
 * knowledge-retrieval (the knowledge bases of ctx.datasets),
 * document-extractor, list-operator, assigner (version 2 operations),
 * iteration and loop (a loop's variables and break conditions), and the
 * error handling of the nodes that have it; http-request, tool and agent
 * are panels-io.js's. Each writes the fields Dify's panel writes. Imports
 * dom.js, fields.js, panels-io.js, checklist.js's loopVars and editor.js's
 * pure helpers.
 */
import { el, uid } from './dom.js';
import { labelled, select, picker, sel, templated, input, checkbox, model,
    llmModel, fieldset, del, addB } from './fields.js';
import { ERROR_NODES, outputsOf } from './editor.js';
import { IO } from './panels-io.js';
import { loopVars } from './checklist.js';

const ASSIGN_OPS = {
	any: ['over-write', 'clear', 'set'],
	number: ['over-write', 'clear', 'set', '+=', '-=', '*=', '/='],
	array: ['over-write', 'clear', 'append', 'extend', 'remove-first',
	    'remove-last'],
};
const PARAM_TYPES = ['string', 'number', 'boolean', 'array[string]',
    'array[number]', 'array[object]', 'array[boolean]'];
const LOOP_OPS = ['contains', 'not contains', 'start with', 'end with', 'is',
    'is not', 'empty', 'not empty', '=', '≠', '>', '<', '≥', '≤'];
const VAR_TYPES = ['string', 'number', 'object', 'boolean', 'array[string]',
    'array[number]', 'array[object]'];
const P = Object.assign({}, IO);

P['question-classifier'] = (d, vars, set, ctx) => {
	const q = picker(vars, d.query_variable_selector, 'Input variable',
	    'qc-query');
	q.addEventListener('change', () => set((x) => {
		x.query_variable_selector = sel(q);
	}));
	const box = fieldset('Classes (each is a branch)', 'classes');
	(d.classes || []).forEach((c, i) => {
		const name = el('textarea', { class: 'qc-class', rows: 2,
		    value: c.name || '', 'aria-label': 'Class ' + (i + 1) });
		name.addEventListener('change', () => set((x) => {
			x.classes[i].name = name.value;
		}));
		box.append(el('div', { class: 'row prow' },
		    el('span', { class: 'muted small', text: 'CLASS ' +
			(i + 1) }), name, (d.classes.length > 1) ?
		    del('Remove class ' + (i + 1), () => set((x) => {
			x.classes.splice(i, 1);
		    }, true)) : null));
	});
	box.append(addB('qc-add', 'Add class', () => set((x) => {
		const ids = (x.classes || []).map((c) => Number(c.id) || 0);
		(x.classes = x.classes || []).push({ id: String(Math.max(0,
		    ...ids) + 1), name: '' });
	}, true)));
	return [labelled('Input variable', q), model(d.model || {}, set,
	    llmModel, ctx), box, templated('Instruction', d.instruction, vars,
	    'qc-instruction', (v) => set((x) => {
		x.instruction = v;
	    }))];
};

P['parameter-extractor'] = (d, vars, set, ctx) => {
	const q = picker(vars, d.query, 'Input variable', 'pe-query');
	q.addEventListener('change', () => set((x) => {
		x.query = sel(q);
	}));
	const mode = select('pe-mode', 'Reasoning mode', [['prompt',
	    'Prompt'], ['function_call', 'Function/tool call']],
	    d.reasoning_mode || 'prompt');
	mode.addEventListener('change', () => set((x) => {
		x.reasoning_mode = mode.value;
	}));
	const box = fieldset('Parameters to extract', 'params');
	(d.parameters || []).forEach((p, i) => {
		const put = (k) => (v) => set((x) => {
			x.parameters[i][k] = v;
		}, true);
		const ty = select('pe-type', 'Parameter type ' + (i + 1),
		    PARAM_TYPES, p.type || 'string');
		ty.addEventListener('change', () => put('type')(ty.value));
		box.append(el('div', { class: 'row prow' },
		    input('pe-name', 'Parameter name ' + (i + 1), p.name,
			put('name')), ty,
		    input('pe-desc', 'Description ' + (i + 1), p.description,
			put('description')),
		    checkbox('pe-req', 'required', p.required,
			put('required')),
		    del('Remove parameter ' + (i + 1), () => set((x) => {
			x.parameters.splice(i, 1);
		    }, true))));
	});
	box.append(addB('pe-add', 'Add parameter', () => set((x) => {
		(x.parameters = x.parameters || []).push({ name: '',
		    type: 'string', description: '', required: false });
	}, true)));
	return [labelled('Input variable', q), model(d.model || {}, set,
	    llmModel, ctx), labelled('Reasoning mode', mode), box,
	    templated('Instruction', d.instruction, vars, 'pe-instruction',
	    (v) => set((x) => {
		x.instruction = v;
	    }))];
};

P['knowledge-retrieval'] = (d, vars, set, ctx) => {
	const q = picker(vars, d.query_variable_selector, 'Query variable',
	    'kr-query');
	q.addEventListener('change', () => set((x) => {
		x.query_variable_selector = sel(q);
	}));
	const have = new Set(d.dataset_ids || []);
	const box = fieldset('Knowledge', 'kr-datasets');
	const list = (ctx && ctx.datasets) || [];
	if (!list.length)
		box.append(el('p', { class: 'muted small', text: 'No ' +
		    'knowledge base yet: create one in Knowledge first.' }));
	for (const ds of list)
		box.append(checkbox('kr-ds', ds.name, have.has(ds.id), (on) =>
		    set((x) => {
			const s = new Set(x.dataset_ids || []);
			if (on)
				s.add(ds.id);
			else
				s.delete(ds.id);
			x.dataset_ids = [...s];
		    })));
	for (const id of have)
		if (!list.some((ds) => ds.id === id))
			box.append(el('p', { class: 'muted small',
			    text: 'Not here: ' + id }));
	const mc = d.multiple_retrieval_config || {};
	const topk = input('kr-topk', 'Top K', mc.top_k ?? 4, (v) => set((x) => {
		x.multiple_retrieval_config = Object.assign(
		    x.multiple_retrieval_config || {}, { top_k: v });
	}), 'number');
	return [labelled('Query variable', q), box, labelled('Top K', topk)];
};

P['document-extractor'] = (d, vars, set) => {
	const files = vars.filter((v) => /file/.test(v.type));
	const p = picker(files, d.variable_selector, 'Input variable',
	    'de-var');
	p.addEventListener('change', () => set((x) => {
		x.variable_selector = sel(p);
		const v = files.find((f) => JSON.stringify(f.selector) ===
		    p.value);
		x.is_array_file = !!v && /^array/.test(v.type);
	}));
	return [labelled('Input variable (a file or a list of files)', p)];
};

P['list-operator'] = (d, vars, set) => {
	const arrays = vars.filter((v) => /^array/.test(v.type));
	const p = picker(arrays, d.variable, 'Input variable', 'lo-var');
	p.addEventListener('change', () => set((x) => {
		x.variable = sel(p);
		const v = arrays.find((a) => JSON.stringify(a.selector) ===
		    p.value);
		x.var_type = v ? v.type : 'array[string]';
		x.item_var_type = x.var_type.replace(/^array\[(.*)\]$/, '$1');
	}));
	const part = (k, label, ...kids) => fieldset(label, 'lo-part-' + k,
	    checkbox('lo-' + k + '-on', 'enabled', d[k] && d[k].enabled,
	    (on) => set((x) => {
		x[k] = Object.assign(x[k] || {}, { enabled: on });
	    })), ...kids);
	const put = (k, f) => (v) => set((x) => {
		x[k] = Object.assign(x[k] || {}, { [f]: v });
	});
	const fb = d.filter_by || {};
	const k0 = (fb.conditions || [])[0] || {};
	const fop = select('lo-filter-op', 'Filter operator', LOOP_OPS,
	    k0.comparison_operator || 'contains');
	const fval = input('lo-filter-value', 'Filter value', k0.value, () =>
	    upd());
	const upd = () => set((x) => {
		x.filter_by = Object.assign(x.filter_by || {}, {
		    conditions: [{ key: '', comparison_operator: fop.value,
			value: fval.value }] });
	});
	fop.addEventListener('change', upd);
	const ord = select('lo-order', 'Order', [['asc', 'Ascending'],
	    ['desc', 'Descending']], (d.order_by || {}).value || 'asc');
	ord.addEventListener('change', () => put('order_by', 'value')(
	    ord.value));
	return [labelled('Input variable', p),
	    part('filter_by', 'Filter', fop, fval),
	    part('extract_by', 'Extract the Nth item', input('lo-serial',
		'Item number', (d.extract_by || {}).serial || '1',
		put('extract_by', 'serial'))),
	    part('order_by', 'Order by', ord),
	    part('limit', 'Take the first N', input('lo-limit', 'N',
		(d.limit || {}).size ?? 10, put('limit', 'size'), 'number'))];
};

P.assigner = (d, vars, set) => {
	/* Dify assigns conversation variables (a workflow's loop variables
	 * inside a loop); any other is read-only */
	const targets = vars.filter((v) => v.selector[0] === 'conversation' ||
	    v.writable);
	const box = fieldset('Operations', 'as-items');
	(d.items || []).forEach((it, i) => {
		const tp = picker(targets, it.variable_selector, 'Variable ' +
		    (i + 1), 'as-var');
		const tv = targets.find((v) => JSON.stringify(v.selector) ===
		    tp.value);
		const ops = ASSIGN_OPS[tv && /^array/.test(tv.type) ? 'array' :
		    tv && tv.type === 'number' ? 'number' : 'any'];
		const op = select('as-op', 'Operation ' + (i + 1), ops,
		    it.operation || 'over-write');
		const needs = !['clear', 'remove-first', 'remove-last']
		    .includes(op.value);
		const constant = it.input_type === 'constant' || ['+=', '-=',
		    '*=', '/=', 'set'].includes(op.value);
		const val = constant ? input('as-value', 'Value ' + (i + 1),
		    it.value, () => upd()) : picker(vars, it.value,
		    'Value variable ' + (i + 1), 'as-from');
		const upd = () => set((x) => {
			const y = x.items[i];
			y.variable_selector = sel(tp);
			y.operation = op.value;
			y.input_type = constant ? 'constant' : 'variable';
			y.value = !needs ? null : constant ? (['+=', '-=',
			    '*=', '/='].includes(op.value) ?
			    Number(val.value) : val.value) : sel(val);
		}, true);
		tp.addEventListener('change', upd);
		op.addEventListener('change', upd);
		if (!constant)
			val.addEventListener('change', upd);
		box.append(el('div', { class: 'row prow' }, tp, op,
		    needs ? val : null, del('Remove operation ' + (i + 1),
		    () => set((x) => {
			x.items.splice(i, 1);
		    }, true))));
	});
	if (!targets.length)
		box.append(el('p', { class: 'muted small', text: 'Only ' +
		    'conversation variables can be assigned: a chatflow ' +
		    'declares them.' }));
	box.append(addB('as-add', 'Add operation', () => set((x) => {
		x.version = '2';
		(x.items = x.items || []).push({ variable_selector: [],
		    input_type: 'variable', operation: 'over-write',
		    value: [] });
	}, true)));
	return [box];
};

P.iteration = (d, vars, set, ctx, ed, id) => {
	const arrays = vars.filter((v) => /^array/.test(v.type));
	const p = picker(arrays, d.iterator_selector, 'Input (a list)',
	    'it-input');
	p.addEventListener('change', () => set((x) => {
		x.iterator_selector = sel(p);
		const v = arrays.find((a) => JSON.stringify(a.selector) ===
		    p.value);
		x.iterator_input_type = v ? v.type : 'array[string]';
	}));
	/* the output: a variable of a node inside */
	const list = [];
	for (const n of ed.nodes().filter((m) => m.parentId === id))
		for (const [k, ty] of outputsOf(n.data || {}))
			list.push({ selector: [n.id, k], label: (n.data.title ||
			    n.id) + '.' + k, type: ty });
	const o = picker(list, d.output_selector,
	    'Output variable', 'it-output');
	o.addEventListener('change', () => set((x) => {
		x.output_selector = sel(o);
		const v = list.find((a) => JSON.stringify(
		    a.selector) === o.value);
		x.output_type = v ? (/^array/.test(v.type) ? 'array[object]' :
		    'array[' + v.type + ']') : 'array[string]';
	}));
	const par = checkbox('it-parallel', 'Run items in parallel',
	    d.is_parallel, (on) => set((x) => {
		x.is_parallel = on;
	    }));
	const eh = select('it-errors', 'On an item\'s error', [['terminated',
	    'Stop'], ['continue-on-error', 'Continue'], ['remove-abnormal-output',
	    'Drop the failed output']], d.error_handle_mode || 'terminated');
	eh.addEventListener('change', () => set((x) => {
		x.error_handle_mode = eh.value;
	}));
	return [labelled('Input (a list)', p), labelled('Output variable', o),
	    par, labelled('On an item\'s error', eh),
	    el('p', { class: 'muted small', text: 'Select the iteration, ' +
		'then add nodes from the palette to put them inside.' })];
};

P.loop = (d, vars0, set, ctx, ed, id) => {
	/* break conditions read the loop's variables and its nodes' too */
	const vars = loopVars(ed, ed.node(id)).concat(vars0);
	const vbox = fieldset('Loop variables', 'lp-vars');
	(d.loop_variables || []).forEach((v, i) => {
		const put = (k) => (val) => set((x) => {
			x.loop_variables[i][k] = val;
		}, true);
		const ty = select('lp-var-type', 'Type ' + (i + 1), VAR_TYPES,
		    v.var_type || 'string');
		ty.addEventListener('change', () => put('var_type')(ty.value));
		vbox.append(el('div', { class: 'row prow' },
		    input('lp-var-name', 'Loop variable name ' + (i + 1),
			v.label, put('label')), ty,
		    input('lp-var-value', 'Initial value ' + (i + 1),
			typeof v.value === 'string' || typeof v.value ===
			'number' ? v.value : '', (val) => put('value')(
			(v.var_type === 'number') ? Number(val) : val)),
		    del('Remove loop variable ' + (i + 1), () => set((x) => {
			x.loop_variables.splice(i, 1);
		    }, true))));
	});
	vbox.append(addB('lp-var-add', 'Add loop variable', () => set((x) => {
		(x.loop_variables = x.loop_variables || []).push({
		    id: uid('lv'), label: '', var_type: 'string',
		    value_type: 'constant', value: '' });
	}, true)));
	const bbox = fieldset('Break when', 'lp-break');
	const lo = select('lp-logic', 'Conditions joined by', [['and', 'AND'],
	    ['or', 'OR']], d.logical_operator || 'and');
	lo.addEventListener('change', () => set((x) => {
		x.logical_operator = lo.value;
	}));
	bbox.append(labelled('Join', lo));
	(d.break_conditions || []).forEach((k, i) => {
		const p = picker(vars, k.variable_selector, 'Break variable ' +
		    (i + 1), 'lp-b-var');
		const op = select('lp-b-op', 'Break operator ' + (i + 1),
		    LOOP_OPS, k.comparison_operator || 'is');
		const val = input('lp-b-value', 'Break value ' + (i + 1),
		    k.value, () => upd());
		const upd = () => set((x) => {
			const y = x.break_conditions[i];
			y.variable_selector = sel(p);
			y.comparison_operator = op.value;
			y.value = val.value;
			const vt = vars.find((z) => JSON.stringify(z.selector) ===
			    p.value);
			y.varType = vt ? vt.type : 'string';
		});
		p.addEventListener('change', upd);
		op.addEventListener('change', upd);
		bbox.append(el('div', { class: 'row prow' }, p, op, val,
		    del('Remove break condition ' + (i + 1), () => set((x) => {
			x.break_conditions.splice(i, 1);
		    }, true))));
	});
	bbox.append(addB('lp-b-add', 'Add break condition', () => set((x) => {
		(x.break_conditions = x.break_conditions || []).push({
		    id: uid('bc'), variable_selector: [],
		    comparison_operator: 'is', value: '', varType: 'string' });
	}, true)));
	const count = input('lp-count', 'Maximum loops', d.loop_count ?? 10,
	    (v) => set((x) => {
		x.loop_count = v;
	    }), 'number');
	return [vbox, bbox, labelled('Maximum loops', count),
	    el('p', { class: 'muted small', text: 'Select the loop, then ' +
		'add nodes from the palette to put them inside (Exit Loop ' +
		'ends it early).' })];
};

/* The error handling of a node of ERROR_NODES: none, a default value of
 * each output, or the fail-branch handle. */
function errors(d, set) {
	const s = select('err-strategy', 'On error', [['', 'Stop the run'],
	    ['default-value', 'Output default values'], ['fail-branch',
	    'Take the fail branch']], d.error_strategy || '');
	s.addEventListener('change', () => set((x) => {
		if (s.value)
			x.error_strategy = s.value;
		else
			delete x.error_strategy;
		if (s.value === 'default-value' && !x.default_value)
			x.default_value = [];
	}, true));
	const out = [labelled('On error', s)];
	if (d.error_strategy === 'fail-branch')
		out.push(el('p', { class: 'muted small', text: 'The FAIL ' +
		    'handle leads where the run goes when this node fails; ' +
		    'error_message and error_type say why.' }));
	if (d.error_strategy === 'default-value') {
		const dv = d.default_value || [];
		const box = fieldset('Default values', 'err-defaults');
		dv.forEach((v, i) => box.append(el('div', { class: 'row prow' },
		    input('err-key', 'Output ' + (i + 1), v.key, (val) =>
			set((x) => {
			x.default_value[i].key = val;
		    })), input('err-value', 'Default ' + (i + 1), v.value,
			(val) => set((x) => {
			x.default_value[i].value = x.default_value[i].type ===
			    'number' ? Number(val) : val;
		    })), del('Remove default ' + (i + 1), () => set((x) => {
			x.default_value.splice(i, 1);
		    }, true)))));
		box.append(addB('err-add', 'Add default value', () => set((x) => {
			(x.default_value = x.default_value || []).push({
			    key: d.type === 'llm' || d.type === 'agent' ?
			    'text' : d.type === 'http-request' ? 'body' : '',
			    type: 'string', value: '' });
		}, true)));
		out.push(box);
	}
	return fieldset('Error handling', 'err', ...out);
}

/*
 * morePanel(t, d, vars, set, ctx, ed, id): the fields of node type t
 * (data d) as elements, or null for a type this module does not know;
 * set(fn, rows) changes the node's data (panels.js's).
 */
export function morePanel(t, d, vars, set, ctx, ed, id) {
	const out = P[t] ? P[t](d, vars, set, ctx, ed, id) : null;
	if (ERROR_NODES.includes(t))
		return (out || []).concat([errors(d, set)]);
	return out;
}
