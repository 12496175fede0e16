/*
 * graph.js — the admin page's view of an app's workflow: the drawing of
 * ../ui/graph.js, a list of the same nodes at phone width, a node's
 * settings (and with a trace, its executions: status, time, inputs and
 * outputs), and with o.edit a few edits through the draft API: a node's
 * title, an LLM or Agent node's prompts and model, Agent Mode
 * (computer_use), the start inputs, the environment variables (secrets
 * stay masked: sending the mask back keeps them); then "Save draft" and
 * "Publish". Text only through textContent.
 */
import { el, svg } from '../ui/dom.js';
import { typeOf, info, titleOf, isContainer, pretty, icon, layout,
    depthOf, drawNode, drawEdge, panZoom } from '../ui/graph.js';

const MASK = '[__HIDDEN__]';	/* ENGINE_SECRET_MASK */

/* ====== The view ====== */

/*
 * Draws draft d (Dify's Workflow view) into box. o.trace: node
 * executions of a run; o.edit: {app, api, flash, onSaved} to edit.
 * Returns {select(id), trace(list)}.
 */
export function show(box, d, o) {
	o = o || {};
	const work = JSON.parse(JSON.stringify(d));
	const nodes = (work.graph && work.graph.nodes) || [];
	const edges = (work.graph && work.graph.edges) || [];
	const byId = new Map(nodes.map((n) => [n.id, n]));
	let execs = null;
	let selected = null;
	let dirty = false;
	const tools = el('div', { class: 'row graph-tools' });
	const svgEl = svg('svg', { class: 'graph-svg', role: 'group',
	    'aria-label': 'Workflow graph: ' + nodes.length +
	    ' nodes' });
	const vp = svg('g', { class: 'viewport' });
	const edgeLayer = svg('g', { class: 'edges' });
	const nodeLayer = svg('g', { class: 'nodes' });
	vp.append(edgeLayer, nodeLayer);
	svgEl.append(vp);
	const list = el('ol', { class: 'graph-list',
	    'aria-label': 'Workflow nodes' });
	const panel = el('div', { class: 'card graph-panel',
	    id: o.trace ? 'trace-node' : 'node-panel', hidden: true,
	    'aria-live': 'polite' });
	const editBar = el('div', { class: 'graph-edit',
	    id: 'graph-edit' });
	box.append(tools, el('div', { class: 'graph-wrap' }, svgEl),
	    list, panel);
	if (o.edit)
		box.append(editBar);

	const box_ = layout(nodes, edges);
	/* containers first, outer before inner; then the rest */
	const order = nodes.slice().sort((a, b) =>
	    (isContainer(typeOf(b)) - isContainer(typeOf(a))) ||
	    depthOf(a, byId) - depthOf(b, byId));
	const gOf = new Map();
	for (const n of order) {
		const g = drawNode(n, box_.get(n.id));
		gOf.set(n.id, g);
		nodeLayer.append(g);
	}
	const handles = new Map();
	for (const e of edges) {
		const h = e.sourceHandle || 'source';
		if (!handles.has(e.source))
			handles.set(e.source, []);
		if (!handles.get(e.source).includes(h))
			handles.get(e.source).push(h);
	}
	/* Dify's order: the cases or classes, then ELSE, then FAIL */
	for (const [id, hs] of handles) {
		const d = (byId.get(id) || {}).data || {};
		const known = [].concat((d.cases || []).map((c) =>
		    c.case_id), (d.classes || []).map((c) => c.id));
		const rank = (h) => h === 'fail-branch' ? 1e6 + 1 :
		    h === 'false' ? 1e6 : known.indexOf(h) >= 0 ?
		    known.indexOf(h) : 1e5;
		hs.sort((a, b) => rank(a) - rank(b));
	}
	for (const e of edges) {
		const g = drawEdge(e, box_, handles);
		if (g)
			edgeLayer.append(g);
	}
	let minX = Infinity, minY = Infinity, maxX = -Infinity,
	    maxY = -Infinity;
	for (const b of box_.values()) {
		minX = Math.min(minX, b.x);
		minY = Math.min(minY, b.y);
		maxX = Math.max(maxX, b.x + b.w);
		maxY = Math.max(maxY, b.y + b.h);
	}
	if (!isFinite(minX))
		minX = minY = maxX = maxY = 0;
	const pz = panZoom(svgEl, vp, { x: minX, y: minY,
	    w: maxX - minX, h: maxY - minY });
	tools.append(
	    el('button', { type: 'button', text: '+', title: 'Zoom in',
		'aria-label': 'Zoom in', on: { click: () =>
		pz.zoom(1.25) } }),
	    el('button', { type: 'button', text: '−',
		title: 'Zoom out', 'aria-label': 'Zoom out',
		on: { click: () => pz.zoom(0.8) } }),
	    el('button', { type: 'button', text: 'Fit',
		on: { click: () => pz.fit() } }),
	    el('span', { class: 'muted small', text: nodes.length +
		' nodes · drag to move, wheel to zoom' }));
	requestAnimationFrame(() => pz.fit());

	/* the list for narrow screens: by column, then from the top */
	const listOf = (parent) => nodes.filter((n) =>
	    (n.parentId || '') === parent && typeOf(n) !== 'note')
	    .sort((a, b) => box_.get(a.id).x - box_.get(b.id).x ||
	    box_.get(a.id).y - box_.get(b.id).y);
	const liOf = new Map();
	const fillList = (ol, parent) => {
		for (const n of listOf(parent)) {
			const t = typeOf(n);
			const li = el('li', { 'data-id': n.id },
			    el('button', { type: 'button',
				class: 'gitem', on: { click: () =>
				select(n.id) } }, icon(t, 22),
				el('span', { class: 'name',
				    text: titleOf(n) }),
				el('span', { class: 'muted small',
				    text: info(t)[0] }),
				el('span', { class: 'gstat' })));
			liOf.set(n.id, li);
			if (isContainer(t))
				fillList(li.appendChild(el('ol')), n.id);
			ol.append(li);
		}
	};
	fillList(list, '');

	const onNode = (ev) => {
		const g = ev.target.closest('.gnode');
		if (!g || svgEl.dataset.dragged) {
			delete svgEl.dataset.dragged;
			return;
		}
		select(g.getAttribute('data-id'));
	};
	svgEl.addEventListener('click', onNode);
	svgEl.addEventListener('keydown', (ev) => {
		if ((ev.key === 'Enter' || ev.key === ' ') &&
		    ev.target.closest('.gnode')) {
			ev.preventDefault();
			onNode(ev);
		}
	});

	/* ---- a run's trace ---- */

	const RANK = { failed: 5, exception: 4, stopped: 3,
	    running: 2, 'partial-succeeded': 1, succeeded: 0 };
	function trace(list_) {
		execs = new Map();
		for (const x of list_ || []) {
			if (!execs.has(x.node_id))
				execs.set(x.node_id, []);
			execs.get(x.node_id).push(x);
		}
		for (const n of nodes) {
			const t = typeOf(n);
			const mine = execs.get(n.id) || [];
			let st = 'skipped', time = 0;
			for (const x of mine) {
				if (st === 'skipped' || (RANK[x.status] ||
				    0) > (RANK[st] || 0))
					st = x.status;
				time += Number(x.elapsed_time) || 0;
			}
			/* notes and container starts never run */
			if (!mine.length && (t === 'note' ||
			    /-start$/.test(t)))
				st = 'none';
			const label = st === 'none' ? '' : st ===
			    'skipped' ? 'skipped' : (mine.length > 1 ?
			    '×' + mine.length + ' ' : '') +
			    time.toFixed(3) + ' s';
			for (const e of [gOf.get(n.id), liOf.get(n.id)]) {
				if (!e)
					continue;
				e.setAttribute('class', (e.getAttribute(
				    'class') || '').replace(/ ?st-\S+/g,
				    '') + ' st-' + st);
				e.setAttribute('data-status', st);
				const s = e.querySelector('.gstat');
				if (s)
					s.textContent = label;
			}
		}
		for (const e of edgeLayer.children)
			if (execs.has(e.getAttribute('data-source')) &&
			    execs.has(e.getAttribute('data-target')))
				e.setAttribute('class', 'gedge taken');
	}

	/* ---- the settings panel ---- */

	function select(id) {
		const n = byId.get(id);
		if (!n)
			return;
		selected = id;
		for (const [k, g] of gOf)
			g.classList.toggle('selected', k === id);
		const t = typeOf(n);
		panel.hidden = false;
		panel.replaceChildren(
		    el('h3', { class: 'row' }, icon(t, 22), ' ',
			titleOf(n), ' ', el('span', { class: 'muted small',
			text: info(t)[0] + ' · ' + n.id })));
		const mine = execs && execs.get(id);
		if (execs) {
			panel.append(el('p', { class: 'gstatus' },
			    mine ? mine.length + ' execution' +
			    (mine.length > 1 ? 's' : '') : 'Not taken ' +
			    'by this run (skipped).'));
			for (const x of mine || [])
				panel.append(el('details',
				    { class: 'trace', open: mine.length ===
				    1 }, el('summary', {}, (x.index !==
				    undefined ? '#' + x.index + ' ' : '') +
				    x.status + (typeof x.elapsed_time ===
				    'number' ? ' · ' + x.elapsed_time
				    .toFixed(3) + ' s' : '')),
				    x.error ? el('div', { class: 'msg error',
					text: x.error }) : null,
				    el('h4', { text: 'Inputs' }),
				    el('pre', { class: 'x-inputs',
					text: pretty(x.inputs || {}) }),
				    el('h4', { text: 'Outputs' }),
				    el('pre', { class: 'x-outputs',
					text: pretty(x.outputs || {}) })));
		}
		if (o.edit)
			panel.append(editor(n));
		panel.append(el('details', { class: 'settings' },
		    el('summary', { text: 'Settings (DSL)' }),
		    el('pre', { text: pretty(n.data || {}) })));
	}

	/* ---- edits through the draft API ---- */

	const say = (text, kind) => o.edit && o.edit.flash &&
	    o.edit.flash(text, kind);
	const base = o.edit ? 'apps/' + encodeURIComponent(o.edit.app.id) +
	    '/workflows' : '';
	const status = el('span', { class: 'muted small',
	    id: 'draft-state', text: 'Draft saved.' });
	const touch = () => {
		dirty = true;
		status.textContent = 'Unsaved changes.';
	};

	function field(label, input) {
		const id = 'ge-' + Math.random().toString(36).slice(2);
		input.id = id;
		return [el('label', { for: id, text: label }), input];
	}

	function editor(n) {
		const t = typeOf(n);
		const d = n.data || (n.data = {});
		const f = el('form', { class: 'node-edit' });
		const apply = [];
		if (t === 'note')
			return f;
		const title = el('input', { type: 'text', name: 'title',
		    value: d.title || '' });
		f.append(...field('Title', title));
		apply.push(() => {
			d.title = title.value;
		});
		if (t === 'llm') {
			const m = d.model || (d.model = {});
			const prov = el('input', { type: 'text',
			    name: 'provider', value: m.provider || '' });
			const name = el('input', { type: 'text',
			    name: 'model', value: m.name || '' });
			f.append(el('div', { class: 'row' },
			    el('div', { class: 'grow' },
				field('Model provider', prov)),
			    el('div', { class: 'grow' },
				field('Model', name))));
			apply.push(() => {
				m.provider = prov.value;
				m.name = name.value;
			});
			const pt = d.prompt_template;
			const msgs = Array.isArray(pt) ? pt : pt &&
			    typeof pt === 'object' ? [pt] : [];
			msgs.forEach((p, i) => {
				const ta = el('textarea', {
				    name: 'prompt-' + i,
				    value: p.text || '' });
				f.append(...field('Prompt ' + (i + 1) +
				    (p.role ? ' (' + p.role + ')' : ''),
				    ta));
				apply.push(() => {
					p.text = ta.value;
				});
			});
			const cu = el('input', { type: 'checkbox',
			    name: 'computer_use', id: 'agent-mode',
			    checked: !!d.computer_use });
			f.append(el('label', { class: 'inline',
			    for: 'agent-mode' }, cu,
			    'Agent Mode (computer_use): the model runs ' +
			    'commands in the sandbox'));
			apply.push(() => {
				d.computer_use = cu.checked;
			});
		}
		if (t === 'agent') {
			const ap = d.agent_parameters ||
			    (d.agent_parameters = {});
			const mv = (ap.model && ap.model.value) || null;
			if (mv) {
				const prov = el('input', { type: 'text',
				    name: 'provider',
				    value: mv.provider || '' });
				const name = el('input', { type: 'text',
				    name: 'model', value: mv.model || '' });
				f.append(...field('Model provider', prov),
				    ...field('Model', name));
				apply.push(() => {
					mv.provider = prov.value;
					mv.model = name.value;
				});
			}
			for (const k of ['instruction', 'query']) {
				if (!ap[k] || typeof ap[k].value !==
				    'string')
					continue;
				const ta = el('textarea', { name: k,
				    value: ap[k].value });
				f.append(...field(k === 'instruction' ?
				    'Instruction' : 'Query', ta));
				apply.push(() => {
					ap[k].value = ta.value;
				});
			}
		}
		if (t === 'start')
			startEditor(f, d, apply);
		f.append(el('div', { class: 'row end' },
		    el('button', { type: 'submit', class: 'primary',
			id: 'node-apply', text: 'Apply' })));
		f.addEventListener('submit', (ev) => {
			ev.preventDefault();
			for (const fn of apply)
				fn();
			touch();
			redraw(n);
			select(n.id);
			say('Changed in the draft: save or publish ' +
			    'it to keep it.');
		});
		return f;
	}

	function startEditor(f, d, apply) {
		const vars = Array.isArray(d.variables) ? d.variables :
		    (d.variables = []);
		const rows = el('tbody');
		const row = (v) => {
			const name = el('input', { type: 'text',
			    class: 'v-name', value: v.variable || '',
			    'aria-label': 'Variable' });
			const label = el('input', { type: 'text',
			    class: 'v-label', value: v.label || '',
			    'aria-label': 'Label' });
			const type = el('select', { class: 'v-type',
			    'aria-label': 'Type' },
			    ['text-input', 'paragraph', 'number',
			    'select', 'file', 'file-list'].map((x) =>
			    el('option', { value: x, text: x,
			    selected: (v.type || 'text-input') === x })));
			type.value = v.type || 'text-input';
			const req = el('input', { type: 'checkbox',
			    class: 'v-req', checked: !!v.required,
			    'aria-label': 'Required' });
			const tr = el('tr', {}, el('td', {}, name),
			    el('td', {}, label), el('td', {}, type),
			    el('td', {}, req), el('td', {},
			    el('button', { type: 'button', text: '✕',
				'aria-label': 'Remove',
				on: { click: () => tr.remove() } })));
			tr.v = v;
			return tr;
		};
		for (const v of vars)
			rows.append(row(v));
		f.append(el('h4', { text: 'Start inputs' }),
		    el('div', { class: 'table-wrap' }, el('table',
			{ id: 'start-vars' }, el('thead', {}, el('tr', {},
			['Variable', 'Label', 'Type', 'Required', '']
			.map((h) => el('th', { text: h })))), rows)),
		    el('button', { type: 'button', id: 'add-input',
			text: 'Add input', on: { click: () =>
			rows.append(row({ type: 'text-input' })) } }));
		apply.push(() => {
			d.variables = [...rows.children].map((tr) => {
				const g = (c) => tr.querySelector(c);
				return Object.assign({}, tr.v, {
					variable: g('.v-name').value,
					label: g('.v-label').value ||
					    g('.v-name').value,
					type: g('.v-type').value,
					required: g('.v-req').checked,
				});
			}).filter((v) => v.variable);
		});
	}

	/* the node's title and subtitle again after an edit */
	function redraw(n) {
		const old = gOf.get(n.id);
		const g = drawNode(n, box_.get(n.id));
		old.replaceWith(g);
		gOf.set(n.id, g);
		const li = liOf.get(n.id);
		if (li)
			li.querySelector('.name').textContent = titleOf(n);
	}

	function envEditor() {
		const vars = work.environment_variables ||
		    (work.environment_variables = []);
		const rows = el('tbody');
		const row = (v) => {
			const secret = v.value_type === 'secret';
			const name = el('input', { type: 'text',
			    class: 'e-name', value: v.name || '',
			    'aria-label': 'Name' });
			const type = el('select', { class: 'e-type',
			    'aria-label': 'Type' },
			    ['string', 'number', 'secret'].map((x) =>
			    el('option', { value: x, text: x })));
			type.value = v.value_type || 'string';
			const val = el('input', { type: secret ?
			    'password' : 'text', class: 'e-value',
			    value: v.value === undefined || v.value ===
			    null ? '' : String(v.value),
			    autocomplete: 'off', 'aria-label': 'Value' });
			type.addEventListener('change', () => {
				val.type = type.value === 'secret' ?
				    'password' : 'text';
			});
			const tr = el('tr', {}, el('td', {}, name),
			    el('td', {}, type), el('td', {}, val),
			    el('td', {}, el('button', { type: 'button',
				text: '✕', 'aria-label': 'Remove',
				on: { click: () => tr.remove() } })));
			tr.v = v;
			return tr;
		};
		for (const v of vars)
			rows.append(row(v));
		const f = el('form', { id: 'env-form' },
		    el('div', { class: 'table-wrap' }, el('table',
			{ id: 'env-vars' }, el('thead', {}, el('tr', {},
			['Name', 'Type', 'Value', ''].map((h) =>
			el('th', { text: h })))), rows)),
		    el('div', { class: 'row' },
			el('button', { type: 'button', text: 'Add ' +
			    'variable', on: { click: () =>
			    rows.append(row({ value_type: 'string',
			    value: '' })) } }),
			el('button', { type: 'submit',
			    text: 'Apply variables' })));
		f.addEventListener('submit', (ev) => {
			ev.preventDefault();
			work.environment_variables = [...rows.children]
			    .map((tr) => {
				const g = (c) => tr.querySelector(c);
				const ty = g('.e-type').value;
				let value = g('.e-value').value;
				if (ty === 'number' && value !== '' &&
				    isFinite(Number(value)))
					value = Number(value);
				return Object.assign({}, tr.v, {
					id: tr.v.id || (crypto.randomUUID ?
					    crypto.randomUUID() : String(
					    Date.now())),
					name: g('.e-name').value,
					value_type: ty, value,
					description: tr.v.description ||
					    '' });
			}).filter((v) => v.name);
			touch();
			say('Variables changed in the draft: save or ' +
			    'publish to keep them.');
		});
		return el('details', { class: 'card', id: 'env-edit' },
		    el('summary', { text: 'Environment variables (' +
			vars.length + ')' }),
		    el('p', { class: 'muted small', text: 'A secret ' +
			'shows as ' + MASK + ': leave it to keep its ' +
			'value, or type a new one.' }), f);
	}

	async function saveDraft() {
		const res = await o.edit.api('POST', base + '/draft',
		    { json: { graph: work.graph, features:
		    work.features || {}, environment_variables:
		    work.environment_variables || [],
		    conversation_variables:
		    work.conversation_variables || [],
		    hash: work.hash } });
		work.hash = res.hash;
		dirty = false;
		status.textContent = 'Draft saved.';
		return res.warnings || [];
	}

	/* what a list of problems ({message}) says, the first few */
	function problems(list) {
		const shown = list.slice(0, 3).map((p) => p.message);
		return shown.join('; ') + (list.length > 3 ? '; and ' +
		    (list.length - 3) + ' more' : '');
	}

	async function guarded(fn) {
		const bs = editBar.querySelectorAll('button');
		bs.forEach((b) => { b.disabled = true; });
		try {
			await fn();
		} catch (e) {
			if (e && e.auth)
				return;
			const errs = e && e.body && Array.isArray(
			    e.body.errors) ? e.body.errors : [];
			say(e && e.code === 'draft_workflow_not_sync' ?
			    'The draft was changed elsewhere since ' +
			    'this page loaded: reload the page, then ' +
			    'make your changes again.' :
			    e && e.code === 'invalid_draft' && errs.length ?
			    'Not published: the draft cannot run (' +
			    errs.length + ' problem' + (errs.length > 1 ?
			    's' : '') + '): ' + problems(errs) :
			    (e && e.message) || String(e), 'error');
		} finally {
			bs.forEach((b) => { b.disabled = false; });
		}
	}

	/* the published versions, newest first; one restored into
	 * the draft shows at once */
	function versions() {
		const ol = el('ol', { id: 'versions' });
		const load = () => guarded(async () => {
			const res = await o.edit.api('GET', base +
			    '?limit=20');
			ol.replaceChildren(...res.items.map((v) =>
			    el('li', { 'data-id': v.id }, v.version,
			    v.marked_name ? ' — ' + v.marked_name : '',
			    ' ', el('button', { type: 'button',
				text: 'Restore', 'aria-label': 'Restore ' +
				v.version, on: { click: () => guarded(
				async () => {
					await o.edit.api('POST', base +
					    '/' + encodeURIComponent(v.id) +
					    '/restore');
					const nd = await o.edit.api('GET',
					    base + '/draft');
					box.replaceChildren();
					show(box, nd, o);
					say('Version ' + v.version +
					    ' restored into the draft.',
					    'ok');
				}) } }))));
			if (!res.items.length)
				ol.append(el('li', { class: 'muted',
				    text: 'Never published: the service ' +
				    'API runs the draft.' }));
		});
		const det = el('details', { class: 'card',
		    id: 'versions-box' }, el('summary',
		    { text: 'Published versions' }), ol);
		det.addEventListener('toggle', () => {
			if (det.open)
				load();
		});
		return det;
	}

	if (o.edit) {
		editBar.append(envEditor(), versions(), el('div',
		    { class: 'row graph-actions' },
		    el('button', { type: 'button', id: 'save-draft',
			text: 'Save draft', on: { click: () =>
			guarded(async () => {
				const w = await saveDraft();
				say(w.length ? 'Draft saved, but it ' +
				    'cannot run or be published yet: ' +
				    problems(w) : 'Draft saved.', w.length ?
				    'error' : 'ok');
			}) } }),
		    el('button', { type: 'button', id: 'publish',
			class: 'primary', text: 'Publish',
			on: { click: () => guarded(async () => {
				if (dirty)
					await saveDraft();
				const r = await o.edit.api('POST', base +
				    '/publish', { json: {} });
				status.textContent = 'Published ' +
				    (r.version || '') + '.';
				say('Published: the service API runs ' +
				    'this version now.', 'ok');
				if (o.edit.onSaved)
					o.edit.onSaved();
			}) } }), status));
	}

	if (o.trace)
		trace(o.trace);
	return { select, trace, fit: () => pz.fit(),
	    get selected() { return selected; } };
}
