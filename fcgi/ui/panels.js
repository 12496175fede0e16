/*
 * panels.js — the editor's configuration panel of a node, per type (start,
 * llm, if-else, code, template-transform, variable-aggregator, answer,
 * end; the other types in panels-more.js), with a variable picker of what
 * the node can read (editor.js's variables(): upstream outputs with their
 * types, system, environment and conversation variables). Every committed
 * input ("change") is one ed.setData, so one undo step. Imports dom.js,
 * fields.js and panels-more.js.
 */
import { el, uid } from './dom.js';
import { labelled, select, picker, sel, templated, namedSelectors, model,
    llmModel } from './fields.js';
import { morePanel } from './panels-more.js';

const OPS = {
	string: ['contains', 'not contains', 'start with', 'end with', 'is',
	    'is not', 'empty', 'not empty'],
	number: ['=', '≠', '>', '<', '≥', '≤', 'empty', 'not empty'],
	file: ['exists', 'not exists'],
};
const NO_VALUE = ['empty', 'not empty', 'exists', 'not exists', 'null',
    'not null'];
const START_TYPES = ['text-input', 'paragraph', 'number', 'select', 'file',
    'file-list'];
const OUT_TYPES = ['string', 'number', 'object', 'boolean',
    'array[string]', 'array[number]', 'array[object]'];

/*
 * panel(ed, id, ctx): the form of node id (ctx: what the page loaded for
 * the panels, {datasets, tools}). Changes go through ed.setData; the
 * caller draws the panel again after undo/redo or a structural change
 * (a row added or removed: ed's onChange with why 'edit' and the panel's
 * own redraw flag, see form.needsRedraw).
 */
export function panel(ed, id, ctx) {
	const n = ed.node(id);
	const d = n.data || {};
	const t = d.type;
	const vars = ed.variables(id);
	const form = el('form', { class: 'node-config', 'data-type': t,
	    on: { submit: (ev) => ev.preventDefault() } });
	/* set(fn): one change to this node's data; rows: a change that
	 * adds or removes a row, after which the panel is drawn again */
	const set = (fn, rows) => {
		form.needsRedraw = !!rows;
		ed.setData(id, fn);
	};
	const title = el('input', { type: 'text', class: 'p-title',
	    value: d.title || '', on: { change: () => set((x) => {
		x.title = title.value;
	    }) } });
	form.append(labelled('Title', title));

	if (t === 'start') {
		const vs = d.variables || [];
		const box = el('fieldset', { class: 'pset' },
		    el('legend', { text: 'Input fields' }));
		vs.forEach((v, i) => {
			const name = el('input', { type: 'text', class: 's-name',
			    value: v.variable || '', 'aria-label':
			    'Variable name ' + (i + 1) });
			const ty = select('s-type', 'Type ' + (i + 1),
			    START_TYPES, v.type || 'text-input');
			const req = el('input', { type: 'checkbox',
			    class: 's-req', checked: !!v.required,
			    'aria-label': 'Required ' + (i + 1) });
			const upd = () => set((x) => {
				Object.assign(x.variables[i], {
				    variable: name.value,
				    label: x.variables[i].label || name.value,
				    type: ty.value, required: req.checked });
				if (x.variables[i].label !== name.value &&
				    !x.variables[i].labelSet)
					x.variables[i].label = name.value;
				/* a file field: what Dify's form asks of one */
				if (/^file/.test(ty.value) &&
				    !x.variables[i].allowed_file_upload_methods)
					Object.assign(x.variables[i], {
					    allowed_file_types: ['document'],
					    allowed_file_extensions: [],
					    allowed_file_upload_methods: [
						'local_file', 'remote_url'],
					    max_length: ty.value === 'file-list' ?
						5 : x.variables[i].max_length });
			});
			for (const c of [name, ty, req])
				c.addEventListener('change', upd);
			box.append(el('div', { class: 'row prow' }, name, ty,
			    el('label', { class: 'inline' }, req, 'required'),
			    el('button', { type: 'button', text: '✕',
				'aria-label': 'Remove variable ' + (i + 1),
				on: { click: () => set((x) => {
				x.variables.splice(i, 1);
			    }, true) } })));
		});
		box.append(el('button', { type: 'button', class: 's-add',
		    text: 'Add input field', on: { click: () => set((x) => {
			(x.variables = x.variables || []).push({
			    variable: '', label: '', type: 'text-input',
			    required: true, max_length: 256, options: [] });
		    }, true) } }));
		form.append(box);
	}

	if (t === 'llm') {
		form.append(model(d.model || {}, set, llmModel, ctx));
		const pt = Array.isArray(d.prompt_template) ?
		    d.prompt_template : [];
		pt.forEach((p, i) => form.append(templated((p.role || 'user')
		    .replace(/^./, (c) => c.toUpperCase()) + ' prompt',
		    p.text, vars, 'prompt-' + (p.role || i), (v) => set((x) => {
			x.prompt_template[i].text = v;
		    }))));
	}

	if (t === 'if-else') {
		const cases = d.cases || [];
		cases.forEach((c, ci) => {
			const box = el('fieldset', { class: 'pset case',
			    'data-case': c.case_id },
			    el('legend', { text: ci === 0 ? 'IF' : 'ELIF' }));
			const lo = select('c-logic', 'Conditions joined by',
			    [['and', 'AND'], ['or', 'OR']],
			    c.logical_operator || 'and');
			lo.addEventListener('change', () => set((x) => {
				x.cases[ci].logical_operator = lo.value;
			}));
			box.append(labelled('Join', lo));
			(c.conditions || []).forEach((k, ki) => {
				const p = picker(vars, k.variable_selector,
				    'Condition variable', 'k-var');
				const v = vars.find((x) => JSON.stringify(
				    x.selector) === JSON.stringify(
				    k.variable_selector));
				const ops = OPS[(v && v.type) === 'number' ?
				    'number' : (v && v.type) === 'file' ? 'file' :
				    'string'];
				const op = select('k-op', 'Operator', ops,
				    k.comparison_operator || ops[0]);
				const val = el('input', { type: 'text',
				    class: 'k-value', value: k.value ?? '',
				    'aria-label': 'Value',
				    hidden: NO_VALUE.includes(
				    k.comparison_operator) });
				const upd = (rows) => set((x) => {
					const kk = x.cases[ci].conditions[ki];
					kk.variable_selector = sel(p);
					kk.comparison_operator = op.value;
					kk.value = val.value;
					const vt = vars.find((y) =>
					    JSON.stringify(y.selector) ===
					    p.value);
					kk.varType = vt ? vt.type : 'string';
					if (!kk.id)
						kk.id = uid('k');
				}, rows);
				p.addEventListener('change', () => upd(true));
				op.addEventListener('change', () => upd(true));
				val.addEventListener('change', () => upd(false));
				box.append(el('div', { class: 'row prow cond' },
				    p, op, val, el('button', { type: 'button',
					text: '✕', 'aria-label':
					'Remove condition ' + (ki + 1),
					on: { click: () => set((x) => {
					x.cases[ci].conditions.splice(ki, 1);
				    }, true) } })));
			});
			box.append(el('button', { type: 'button',
			    class: 'k-add', text: 'Add condition',
			    on: { click: () => set((x) => {
				x.cases[ci].conditions.push({
				    id: uid('k'), variable_selector: [],
				    comparison_operator: 'contains',
				    value: '', varType: 'string' });
			    }, true) } }));
			if (ci > 0)
				box.append(el('button', { type: 'button',
				    class: 'c-del', text: 'Remove this ELIF',
				    on: { click: () => set((x) => {
					x.cases.splice(ci, 1);
				    }, true) } }));
			form.append(box);
		});
		form.append(el('button', { type: 'button', class: 'c-add',
		    text: 'Add ELIF', on: { click: () => set((x) => {
			x.cases.push({ case_id: crypto.randomUUID ?
			    crypto.randomUUID() : uid('case'),
			    logical_operator: 'and', conditions: [] });
		    }, true) } }),
		    el('p', { class: 'muted small', text: 'ELSE: when no ' +
			'case matches (the last handle).' }));
	}

	if (t === 'code' || t === 'template-transform') {
		form.append(namedSelectors('Input', d.variables || [], vars,
		    'variable', 'value_selector', (fn) => set((x) => {
			fn(x.variables = x.variables || []);
		    }, true), 'inputs'));
	}
	if (t === 'code') {
		const lang = select('code-lang', 'Language', [['python3',
		    'Python 3'], ['javascript', 'JavaScript']],
		    d.code_language || 'python3');
		lang.addEventListener('change', () => set((x) => {
			x.code_language = lang.value;
		}));
		const code = el('textarea', { class: 'code', rows: 8,
		    spellcheck: 'false', value: d.code || '',
		    on: { change: () => set((x) => {
			x.code = code.value;
		    }) } });
		form.append(labelled('Language', lang), labelled('Code', code));
		const outs = Object.entries(d.outputs || {});
		const box = el('fieldset', { class: 'pset outputs' },
		    el('legend', { text: 'Output variables' }));
		outs.forEach(([k, v], i) => {
			const name = el('input', { type: 'text', class: 'o-name',
			    value: k, 'aria-label': 'Output name ' + (i + 1) });
			const ty = select('o-type', 'Output type ' + (i + 1),
			    OUT_TYPES, v.type || 'string');
			const upd = () => set((x) => {
				const e = Object.entries(x.outputs || {});
				e[i] = [name.value, { type: ty.value,
				    children: null }];
				x.outputs = Object.fromEntries(e.filter(([kk]) =>
				    kk));
			}, true);
			name.addEventListener('change', upd);
			ty.addEventListener('change', upd);
			box.append(el('div', { class: 'row prow' }, name, ty,
			    el('button', { type: 'button', text: '✕',
				'aria-label': 'Remove output ' + (i + 1),
				on: { click: () => set((x) => {
				delete x.outputs[k];
			    }, true) } })));
		});
		box.append(el('button', { type: 'button', class: 'o-add',
		    text: 'Add output', on: { click: () => set((x) => {
			let k = 'output', j = 1;
			x.outputs = x.outputs || {};
			while (x.outputs[k])
				k = 'output' + (++j);
			x.outputs[k] = { type: 'string', children: null };
		    }, true) } }));
		form.append(box);
	}
	if (t === 'template-transform')
		form.append(templated('Template (Jinja2: {{ name }} of an input)',
		    d.template, [], 'template', (v) => set((x) => {
			x.template = v;
		    })));

	if (t === 'variable-aggregator') {
		const ty = select('agg-type', 'Output type', OUT_TYPES,
		    d.output_type || 'string');
		ty.addEventListener('change', () => set((x) => {
			x.output_type = ty.value;
		}));
		form.append(labelled('Output type', ty));
		const box = el('fieldset', { class: 'pset agg' },
		    el('legend', { text: 'Variables (the first that has a ' +
			'value wins)' }));
		(d.variables || []).forEach((s, i) => {
			const p = picker(vars, s, 'Variable ' + (i + 1),
			    'agg-var');
			p.addEventListener('change', () => set((x) => {
				x.variables[i] = sel(p);
			}));
			box.append(el('div', { class: 'row prow' }, p,
			    el('button', { type: 'button', text: '✕',
				'aria-label': 'Remove variable ' + (i + 1),
				on: { click: () => set((x) => {
				x.variables.splice(i, 1);
			    }, true) } })));
		});
		box.append(el('button', { type: 'button', class: 'agg-add',
		    text: 'Add variable', on: { click: () => set((x) => {
			(x.variables = x.variables || []).push([]);
		    }, true) } }));
		form.append(box);
	}

	if (t === 'answer')
		form.append(templated('Answer', d.answer, vars, 'answer',
		    (v) => set((x) => {
			x.answer = v;
		    })));

	if (t === 'end')
		form.append(namedSelectors('Output', d.outputs || [], vars,
		    'variable', 'value_selector', (fn) => set((x) => {
			fn(x.outputs = x.outputs || []);
		    }, true), 'end-outputs'));

	/* the other types, and error handling: panels-more.js */
	const more = morePanel(t, d, vars, set, ctx, ed, id);
	if (more)
		form.append(...more.filter(Boolean));
	return form;
}
