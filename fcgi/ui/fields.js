/*
 * fields.js — the form pieces every node panel is made of: a labelled
 * control, a <select>, the variable picker (upstream outputs with their
 * types), a text area with {{#node.var#}} insertion, rows of named
 * selectors; a committed input, a checkbox, a model's provider and name,
 * a fieldset, row buttons. Imports dom.js only.
 */
import { el, uid } from './dom.js';

/* [label, control] with the label's for= the control's id. */
export function labelled(text, ctl) {
	ctl.id = ctl.id || uid('p');
	return el('div', { class: 'pfield' },
	    el('label', { for: ctl.id, text }), ctl);
}

export function select(cls, label, options, value) {
	const s = el('select', { class: cls, 'aria-label': label },
	    options.map((o) => Array.isArray(o) ?
	    el('option', { value: o[0], text: o[1] }) :
	    el('option', { value: o, text: o })));
	s.value = value === undefined || value === null ? '' : value;
	return s;
}

/*
 * A variable picker: a <select> of vars ({selector, label, type}) whose
 * value is the selector as JSON; selector is the current one (kept, marked
 * missing, when it is not among vars).
 */
export function picker(vars, selector, label, cls) {
	const cur = selector && selector.length ? JSON.stringify(selector) : '';
	const opts = [['', '— choose a variable —']].concat(vars.map((v) =>
	    [JSON.stringify(v.selector), v.label + ' (' + v.type + ')']));
	if (cur && !vars.some((v) => JSON.stringify(v.selector) === cur))
		opts.push([cur, selector.join('.') + ' (not upstream)']);
	return select('vpick ' + (cls || ''), label, opts, cur);
}

export const sel = (s) => s.value ? JSON.parse(s.value) : [];

/* A textarea with an "insert variable" picker that puts {{#node.var#}}
 * at the caret. */
export function templated(label, value, vars, cls, onCommit) {
	const ta = el('textarea', { class: cls, rows: 4, value: value || '',
	    on: { change: () => onCommit(ta.value) } });
	const ins = picker(vars, null, 'Insert a variable into ' + label,
	    'insert ' + cls + '-insert');
	ins.addEventListener('change', () => {
		if (!ins.value)
			return;
		const ref = '{{#' + JSON.parse(ins.value).join('.') + '#}}';
		const at = ta.selectionStart ?? ta.value.length;
		ta.value = ta.value.slice(0, at) + ref + ta.value.slice(
		    ta.selectionEnd ?? at);
		ins.value = '';
		onCommit(ta.value);
	});
	return el('div', {}, labelled(label, ta), labelled('Insert variable',
	    ins));
}

/* Rows of {name, selector} (code and template inputs, end outputs). */
export function namedSelectors(title, list, vars, nameKey, selKey, commit, cls) {
	const box = el('div', { class: 'prows ' + cls });
	list.forEach((v, i) => {
		const name = el('input', { type: 'text', class: 'r-name',
		    value: v[nameKey] || '', 'aria-label': title + ' name ' +
		    (i + 1) });
		const p = picker(vars, v[selKey], title + ' variable ' + (i + 1),
		    'r-sel');
		const upd = () => commit((l) => {
			l[i][nameKey] = name.value;
			l[i][selKey] = sel(p);
		});
		name.addEventListener('change', upd);
		p.addEventListener('change', () => {
			/* a new row named after what it reads */
			if (!name.value && p.value)
				name.value = JSON.parse(p.value)[1];
			upd();
		});
		box.append(el('div', { class: 'row prow' }, name, p,
		    el('button', { type: 'button', text: '✕', class: 'r-del',
			'aria-label': 'Remove ' + title.toLowerCase() + ' ' +
			(i + 1), on: { click: () => commit((l) =>
			l.splice(i, 1)) } })));
	});
	box.append(el('button', { type: 'button', class: 'r-add',
	    text: 'Add ' + title.toLowerCase(), on: { click: () =>
	    commit((l) => l.push({ [nameKey]: '', [selKey]: [] })) } }));
	return el('fieldset', { class: 'pset' }, el('legend', { text: title }),
	    box);
}

/* ====== Small controls the panels share ====== */

export const text = (s) => typeof s === 'string' ? s : (s && (s.en_US ||
    s.zh_Hans)) || '';

/* A text input committed on change. */
export function input(cls, label, value, onCommit, type) {
	const i = el('input', { type: type || 'text', class: cls,
	    'aria-label': label, value: value ?? '' });
	i.addEventListener('change', () => onCommit(type === 'number' ?
	    Number(i.value) : i.value));
	return i;
}

export function checkbox(cls, label, on, onCommit) {
	const c = el('input', { type: 'checkbox', class: cls, checked: !!on,
	    'aria-label': label });
	c.addEventListener('change', () => onCommit(c.checked));
	return el('label', { class: 'inline' }, c, ' ' + label);
}

/* The model fields of m ({provider, name or model}), written by put(x,
 * provider, name); ctx.models (the console's model providers) suggests. */
export function model(m, set, put, ctx) {
	const prov = input('m-provider', 'Model provider', m.provider, () =>
	    upd());
	const name = input('m-name', 'Model', m.name || m.model, () => upd());
	const upd = () => set((x) => put(x, prov.value, name.value));
	/* the configured providers and their models, as suggestions: a
	 * provider set up after the app was written is still typed in */
	const ps = ((ctx && ctx.models) || []).filter((p) => p.configured &&
	    p.name !== '*');
	const lists = [['m-providers', ps.map((p) => p.name)],
	    ['m-models', [...new Set(ps.flatMap((p) => p.models || []))]]]
	    .map(([cls, vals]) => el('datalist', { id: uid(cls), class: cls },
	    vals.map((v) => el('option', { value: v }))));
	prov.setAttribute('list', lists[0].id);
	name.setAttribute('list', lists[1].id);
	return el('div', { class: 'row' }, labelled('Model provider', prov),
	    labelled('Model', name), ...lists);
}

export const llmModel = (x, p, n) => {
	x.model = Object.assign(x.model || {}, { provider: p, name: n,
	    mode: (x.model && x.model.mode) || 'chat' });
};

export function fieldset(legend, cls, ...kids) {
	return el('fieldset', { class: 'pset ' + (cls || '') },
	    el('legend', { text: legend }), ...kids);
}

export function del(label, fn) {
	return el('button', { type: 'button', text: '✕', 'aria-label': label,
	    on: { click: fn } });
}

export function addB(cls, label, fn) {
	return el('button', { type: 'button', class: cls, text: label,
	    on: { click: fn } });
}
