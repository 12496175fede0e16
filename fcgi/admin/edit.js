/*
 * edit.js — the Edit tab: the graph editor of an app's draft. The drawing
 * is ../ui/graph.js's, the state and its undo/redo and autosave
 * ../ui/editor.js's, the configuration forms ../ui/panels.js's; this
 * module puts them on the page and turns the pointer and the keyboard into
 * the editor's operations:
 *
 * - a palette of every node type the engine runs adds a node (right of
 *   the selected one, or of the rightmost); with an iteration or a loop
 *   selected, or a node inside one, the new node goes inside it (an
 *   iteration or a loop comes with its start node, editor.js);
 * - drag a node to move it; drag from a node's source handle (the right
 *   side: one per if-else case and ELSE) to another node to connect them;
 *   drag the target handle (left side) of a connected node away to
 *   disconnect its last incoming edge, or onto another node to move it;
 * - click a node or an edge to select it (on nothing, or Escape, to
 *   select none); Delete removes the selection;
 *   Ctrl+Z / Ctrl+Shift+Z (or Ctrl+Y) undo and redo, Ctrl+C / Ctrl+V copy
 *   the selected node and paste it beside; the selected node's
 *   panel also lists its edges with a Disconnect button and connects a
 *   handle to a node chosen from a list (all by keyboard);
 * - every change is saved to the draft with its hash once it settles; a
 *   hash another tab has moved on says so and offers a reload; Publish
 *   saves, then publishes (with a version name when one is given) once
 *   the checklist (../ui/checklist.js: dangling nodes, empty required
 *   fields, variables read that are not upstream) is empty; the nodes it
 *   names are marked;
 * - Fit zooms to the whole graph; a large one has a minimap
 *   (../ui/minimap.js) that centres the view where it is clicked;
 * - Run (edit-run.js) runs the saved draft and colours the nodes as their
 *   events stream in.
 */
import { el, svg, clear } from '../ui/dom.js';
import { layout, drawNode, drawEdge, panZoom, typeOf, titleOf, info,
    depthOf, NODE_H } from '../ui/graph.js';
import { createEditor, autosaver, sourceHandles, isBox }
    from '../ui/editor.js';
import { panel } from '../ui/panels.js';
import { check } from '../ui/checklist.js';
import { minimap } from '../ui/minimap.js';
import { page, flash, api, fail, enc } from './page.js';
import { draft } from './draft.js';
import { handleLabel, edgesOf } from './edit-links.js';
import { runner } from './edit-run.js';

/* every node type the engine runs, in Dify's block order */
const PALETTE = ['start', 'llm', 'knowledge-retrieval', 'answer', 'end',
    'agent', 'question-classifier', 'if-else', 'iteration', 'loop',
    'loop-end', 'code', 'template-transform', 'variable-aggregator',
    'document-extractor', 'assigner', 'parameter-extractor', 'http-request',
    'list-operator', 'tool'];
/* only inside a container; never inside one */
const INSIDE_ONLY = { 'loop-end': 'loop' };
const OUTSIDE_ONLY = ['start', 'end', 'iteration', 'loop'];
/* a graph of this many nodes gets a minimap */
const MINIMAP_AT = 10;

/* What the panels choose from: the knowledge bases, the tool providers
 * (with their tools) and the model providers; what cannot be read is an
 * empty list. */
async function panelData() {
	const get = (p) => api('GET', p).catch(() => null);
	const [ds, tools, models] = await Promise.all([
	    get('datasets?page=1&limit=100'),
	    get('workspaces/current/tool-providers'),
	    get('workspaces/current/model-providers')]);
	return { datasets: (ds && ds.data) || [],
	    tools: Array.isArray(tools) ? tools : [],
	    models: (models && models.data) || [] };
}

export async function appEdit(app, pane, me) {
	if (app.mode !== 'workflow' && app.mode !== 'advanced-chat') {
		pane.append(el('p', { class: 'muted', text: 'A ' + app.mode +
		    ' app has no workflow graph to edit.' }));
		return;
	}
	const [d, ctx] = await Promise.all([draft(app), panelData()]);
	if (me !== page.view)
		return;
	const base = 'apps/' + enc(app.id) + '/workflows';
	let selected = null;	/* {node: id} or {edge: id} */
	let formOf = null;	/* the panel's form, for its redraw flag */
	const ed = createEditor(d || { graph: { nodes: [], edges: [] } },
	    (why) => changed(why));
	ed.chat = app.mode === 'advanced-chat';

	/* ---- the page ---- */
	const state = el('span', { id: 'edit-state', class: 'muted small',
	    role: 'status', text: 'Draft saved.' });
	const undoB = el('button', { type: 'button', id: 'edit-undo',
	    text: 'Undo', title: 'Undo (Ctrl+Z)', on: { click: () =>
	    ed.undo() } });
	const redoB = el('button', { type: 'button', id: 'edit-redo',
	    text: 'Redo', title: 'Redo (Ctrl+Shift+Z)', on: { click: () =>
	    ed.redo() } });
	const delB = el('button', { type: 'button', id: 'edit-delete',
	    text: 'Delete', title: 'Delete the selection (Delete)',
	    on: { click: () => removeSelected() } });
	const vname = el('input', { type: 'text', id: 'edit-version-name',
	    placeholder: 'Version name (optional)', maxlength: 100,
	    'aria-label': 'Version name' });
	const checks = el('ul', { id: 'edit-checks' });
	const checkSum = el('summary', { text: 'Checklist' });
	const checkBox = el('details', { class: 'card edit-checklist',
	    id: 'edit-checklist' }, checkSum, checks);
	let problems = [];
	const pubB = el('button', { type: 'button', id: 'edit-publish',
	    class: 'primary', text: 'Publish', on: { click: () =>
	    publish() } });
	const palette = el('div', { class: 'row palette', id: 'palette',
	    role: 'toolbar', 'aria-label': 'Add a node' },
	    PALETTE.map((t) => el('button', { type: 'button',
		class: 'pal', 'data-type': t, text: '+ ' + info(t)[0],
		'aria-label': 'Add ' + info(t)[0], on: { click: () =>
		addNode(t) } })));
	const svgEl = svg('svg', { class: 'graph-svg edit-svg', role: 'group',
	    tabindex: 0, 'aria-label': 'Workflow graph (editor)' });
	const vp = svg('g', { class: 'viewport' });
	const edgeLayer = svg('g', { class: 'edges' });
	const nodeLayer = svg('g', { class: 'nodes' });
	const ghost = svg('path', { class: 'ghost', d: '' });
	vp.append(edgeLayer, nodeLayer, ghost);
	svgEl.append(vp);
	const mini = minimap((x, y) => pz.center(x, y));
	/* the run panel saves the draft first */
	const run = runner(app, ed, nodeLayer, async () => {
		await saver.flush();
		return !saver.stale;
	});
	const side = el('section', { class: 'card edit-panel', id: 'edit-panel',
	    'aria-label': 'Node settings', 'aria-live': 'polite' },
	    el('p', { class: 'muted', text: 'Select a node to configure it.' }));
	const root = el('div', { class: 'editor', id: 'editor' },
	    el('p', { class: 'msg phone-note', text: 'Editing needs a wider ' +
		'screen; on a phone the Overview tab shows the graph as a ' +
		'list.' }),
	    el('div', { class: 'row edit-tools' }, undoB, redoB, delB,
		el('button', { type: 'button', text: 'Fit', id: 'edit-fit',
		    on: { click: () => pz.fit() } }), vname, pubB, state),
	    palette,
	    el('div', { class: 'edit-main' },
		el('div', { class: 'graph-wrap' }, svgEl, mini.el),
		el('div', { class: 'edit-side' }, run.el, checkBox, side)));
	pane.append(root);
	const bounds = { x: 0, y: 0, w: 1, h: 1 };
	const pz = panZoom(svgEl, vp, bounds, () => paintMini());
	function paintMini() {
		/* an <svg> has no hidden property: its display */
		const few = ed.nodes().length < MINIMAP_AT;
		mini.el.style.display = few ? 'none' : '';
		if (!few)
			mini.draw(box, bounds, pz.view());
	}

	const saver = autosaver(ed, (body) => api('POST', base + '/draft',
	    { json: body }), (s, e, r) => {
		if (s === 'pending')
			state.textContent = 'Unsaved changes…';
		else if (s === 'saving')
			state.textContent = 'Saving…';
		else if (s === 'saved')
			state.textContent = (r && r.warnings && r.warnings.length) ?
			    'Draft saved (it cannot run yet: ' +
			    r.warnings.length + ' problem' +
			    (r.warnings.length > 1 ? 's' : '') + ').' :
			    'Draft saved.';
		else if (s === 'stale') {
			state.textContent = 'Not saved.';
			flash('The draft was changed in another tab or window ' +
			    'since this page loaded; your changes here are ' +
			    'not saved. ', 'error', el('button', {
				type: 'button', id: 'edit-reload',
				text: 'Reload the draft', on: { click: () =>
				location.reload() } }));
		} else if (s === 'error') {
			state.textContent = 'Not saved.';
			fail(e);
		}
	    });

	/* ---- drawing ---- */
	let box = new Map();
	function draw() {
		const nodes = ed.nodes();
		box = layout(nodes, ed.edges());
		clear(edgeLayer);
		clear(nodeLayer);
		const hmap = new Map(nodes.map((n) => [n.id,
		    sourceHandles(n)]));
		for (const e of ed.edges()) {
			const g = drawEdge(e, box, hmap, false);
			if (!g)
				continue;
			g.setAttribute('data-id', e.id);
			g.setAttribute('tabindex', '-1');
			/* a wide invisible path to click on */
			const p = g.querySelector('path');
			g.prepend(svg('path', { class: 'hit',
			    d: p.getAttribute('d') }));
			if (selected && selected.edge === e.id)
				g.classList.add('selected');
			edgeLayer.append(g);
		}
		/* containers under what is inside them */
		const byId = new Map(nodes.map((n) => [n.id, n]));
		const order = nodes.slice().sort((a, b) => depthOf(a, byId) -
		    depthOf(b, byId));
		for (const n of order) {
			const b = box.get(n.id);
			const g = drawNode(n, b);
			if (selected && selected.node === n.id)
				g.classList.add('selected');
			if (!/(^|-)start$/.test(typeOf(n)))
				g.append(svg('circle', { class: 'h-target',
				    cx: 0, cy: Math.min(b.h, NODE_H) / 2, r: 6,
				    'data-node': n.id }));
			const hs = hmap.get(n.id);
			hs.forEach((h, i) => {
				const y = Math.min(b.h, NODE_H) * (i + 1) /
				    (hs.length + 1);
				g.append(svg('circle', { class: 'h-source',
				    cx: b.w, cy: y, r: 6, 'data-node': n.id,
				    'data-handle': h }));
				const lab = handleLabel(n, h);
				if (lab)
					g.append(svg('text', { class: 'hlabel',
					    x: b.w - 10, y: y + 4,
					    'text-anchor': 'end' }, lab));
			});
			nodeLayer.append(g);
		}
		let minX = Infinity, minY = Infinity, maxX = -Infinity,
		    maxY = -Infinity;
		for (const b of box.values()) {
			minX = Math.min(minX, b.x);
			minY = Math.min(minY, b.y);
			maxX = Math.max(maxX, b.x + b.w);
			maxY = Math.max(maxY, b.y + b.h);
		}
		if (!isFinite(minX))
			minX = minY = 0, maxX = maxY = 1;
		Object.assign(bounds, { x: minX, y: minY, w: maxX - minX,
		    h: maxY - minY });
		problems = check(ed, app.mode);
		const bad = new Set(problems.map((p) => p.node));
		for (const g of nodeLayer.children)
			if (bad.has(g.getAttribute('data-id')))
				g.classList.add('warn');
		checkSum.textContent = problems.length ? 'Checklist: ' +
		    problems.length + ' to fix before publishing' :
		    'Checklist: nothing to fix';
		checkBox.classList.toggle('clean', !problems.length);
		checks.replaceChildren(...problems.map((p) => el('li', {},
		    p.node ? el('button', { type: 'button', class: 'link',
			text: p.message, on: { click: () =>
			select({ node: p.node }) } }) : p.message)));
		undoB.disabled = !ed.canUndo;
		redoB.disabled = !ed.canRedo;
		delB.disabled = !selected;
		svgEl.setAttribute('aria-label', 'Workflow graph (editor): ' +
		    nodes.length + ' nodes, ' + ed.edges().length + ' edges');
		run.paint();
		paintMini();
	}

	function showPanel() {
		const n = selected && selected.node && ed.node(selected.node);
		if (!n) {
			formOf = null;
			side.replaceChildren(el('p', { class: 'muted', text:
			    selected && selected.edge ? 'Edge selected: Delete ' +
			    'removes it.' : 'Select a node to configure it.' }));
			return;
		}
		formOf = panel(ed, n.id, ctx);
		side.replaceChildren(el('h3', { id: 'edit-panel-title',
		    text: titleOf(n) + ' · ' + info(typeOf(n))[0] }), formOf,
		    edgesOf(ed, n));
		/* Dify's single run of a node, in the run panel */
		if (run.canStep(n))
			side.append(el('button', { type: 'button', id:
			    'edit-step-node', text: 'Run this node', on: {
			    click: () => run.step(n.id) } }));
	}

	function changed(why) {
		if (selected && selected.node && !ed.node(selected.node))
			selected = null;
		if (selected && selected.edge && !ed.edges().some((e) =>
		    e.id === selected.edge))
			selected = null;
		draw();
		if (why !== 'edit' || !formOf || formOf.needsRedraw)
			showPanel();
		saver.touch();
	}

	function select(s) {
		const had = root.contains(document.activeElement);
		selected = s;
		draw();
		showPanel();
		/* the focused node was drawn again: keys still reach us */
		if (had && !root.contains(document.activeElement))
			svgEl.focus();
	}

	/* Ctrl+C / Ctrl+V: a copy of the selected node, beside it. */
	let clip = null;
	function copy() {
		const n = selected && selected.node && ed.node(selected.node);
		if (n)
			clip = { data: n.data, at: box.get(n.id) };
	}
	function paste() {
		if (!clip)
			return;
		const at = { x: clip.at.x + 40, y: clip.at.y + 70 };
		const id = ed.paste(clip.data, at);
		if (id === null) {
			flash('A workflow has one Start node.', 'error');
			return;
		}
		clip.at = at;
		select({ node: id });
	}

	/*
	 * Adds a node of type t: right of the selected node (in its
	 * container, if it is in one), inside the selected iteration or loop,
	 * or right of the rightmost node.
	 */
	function addNode(t) {
		const sn = selected && selected.node && ed.node(selected.node);
		let parent = sn ? (isBox(sn) ? sn.id : sn.parentId || null) :
		    null;
		if (parent && OUTSIDE_ONLY.includes(t))
			parent = null;
		if (INSIDE_ONLY[t] && !(parent && typeOf(ed.node(parent)) ===
		    INSIDE_ONLY[t])) {
			flash('Exit Loop goes inside a loop: select the loop ' +
			    'first.', 'error');
			return;
		}
		let x = 80, y = 120;
		let id;
		if (parent) {
			/* relative to the container, right of what is in it */
			const pb = box.get(parent);
			const kids = ed.nodes().filter((n) => n.parentId ===
			    parent).map((n) => box.get(n.id)).filter(Boolean);
			const last = sn && sn.parentId === parent ?
			    box.get(sn.id) : kids.reduce((a, b) => b.x > a.x ?
			    b : a, kids[0]);
			x = last ? last.x + last.w + 60 - pb.x : 24;
			y = last ? last.y - pb.y : 68;
			while (kids.some((b) => Math.abs(b.x - pb.x - x) < 200 &&
			    Math.abs(b.y - pb.y - y) < 50))
				y += 80;
			id = ed.addNode(t, { x, y }, parent);
		} else {
			const top = [...box.entries()].filter(([k]) =>
			    !(ed.node(k) || {}).parentId).map(([, b]) => b);
			const sb = sn && box.get(sn.id);
			if (sb && !sn.parentId) {
				x = sb.x + sb.w + 90;
				y = sb.y;
			} else if (top.length) {
				const r = top.reduce((a, b) => b.x + b.w >
				    a.x + a.w ? b : a);
				x = r.x + r.w + 90;
				y = r.y;
			}
			/* not on top of another node */
			while (top.some((b) => x < b.x + b.w + 20 &&
			    b.x < x + 264 && y < b.y + b.h + 10 &&
			    b.y < y + 80))
				y += 90;
			id = ed.addNode(t, { x, y });
		}
		if (id === null) {
			flash('A ' + info(t)[0] + ' node cannot go there.',
			    'error');
			return;
		}
		select({ node: id });
		requestAnimationFrame(() => pz.fit());
	}

	function removeSelected() {
		if (!selected)
			return;
		if (selected.node)
			ed.removeNode(selected.node);
		else
			ed.disconnect(selected.edge);
	}

	async function publish() {
		if (problems.length) {
			checkBox.open = true;
			flash('Not published: fix the checklist first (' +
			    problems.length + ').', 'error');
			return;
		}
		pubB.disabled = true;
		try {
			await saver.flush();
			if (saver.stale)
				return;
			const r = await api('POST', base + '/publish',
			    { json: vname.value.trim() ? { marked_name:
			    vname.value.trim() } : {} });
			state.textContent = 'Published ' + (r.version || '') + '.';
			flash('Published: the service API runs this version now.',
			    'ok');
		} catch (e) {
			const errs = e && e.body && Array.isArray(e.body.errors) ?
			    e.body.errors : [];
			if (e && e.code === 'invalid_draft' && errs.length)
				flash('Not published: ' + errs.slice(0, 3).map((p) =>
				    p.message).join('; '), 'error');
			else
				fail(e);
		} finally {
			pubB.disabled = false;
		}
	}

	/* ---- pointer: move nodes, drag edges between handles ---- */
	const toGraph = (ev) => {
		const r = svgEl.getBoundingClientRect();
		return { x: (ev.clientX - r.left - pz.state.x) / pz.state.k,
		    y: (ev.clientY - r.top - pz.state.y) / pz.state.k };
	};
	const nodeAt = (ev) => {
		const hit = document.elementFromPoint(ev.clientX, ev.clientY);
		const g = hit && hit.closest && hit.closest('.gnode');
		return g ? g.getAttribute('data-id') : null;
	};
	let drag = null;
	/* in the capture phase, before graph.js's pan: a drag that starts
	 * on a handle or a node (a container too) is ours, not a pan */
	svgEl.addEventListener('pointerdown', (ev) => {
		const t = ev.target;
		const g = t.closest('.gnode');
		if (t.classList.contains('h-source')) {
			drag = { kind: 'connect', from: t.getAttribute('data-node'),
			    handle: t.getAttribute('data-handle'),
			    start: toGraph(ev) };
		} else if (t.classList.contains('h-target')) {
			const id = t.getAttribute('data-node');
			const inc = ed.edges().filter((e) => e.target === id);
			if (!inc.length)
				return;
			const e = inc[inc.length - 1];
			const s = box.get(e.source);
			drag = { kind: 'detach', edge: e, start: s ? { x: s.x +
			    s.w, y: s.y + NODE_H / 2 } : toGraph(ev) };
		} else if (g && !/-start$/.test(g.getAttribute('data-type'))) {
			const id = g.getAttribute('data-id');
			const b = box.get(id);
			const p = toGraph(ev);
			drag = { kind: 'move', id, dx: p.x - b.x, dy: p.y - b.y,
			    moved: false, px: ev.clientX, py: ev.clientY };
		} else
			return;
		ev.stopPropagation();
		svgEl.setPointerCapture(ev.pointerId);
	}, true);
	svgEl.addEventListener('pointermove', (ev) => {
		if (!drag)
			return;
		const p = toGraph(ev);
		if (drag.kind === 'move') {
			if (!drag.moved && Math.abs(ev.clientX - drag.px) +
			    Math.abs(ev.clientY - drag.py) < 5)
				return;
			drag.moved = true;
			const g = nodeLayer.querySelector('.gnode[data-id="' +
			    CSS.escape(drag.id) + '"]');
			if (g)
				g.setAttribute('transform', 'translate(' +
				    (p.x - drag.dx) + ',' + (p.y - drag.dy) + ')');
			drag.at = { x: p.x - drag.dx, y: p.y - drag.dy };
			return;
		}
		const s = drag.start;
		ghost.setAttribute('d', 'M' + s.x + ',' + s.y + ' L' + p.x +
		    ',' + p.y);
	});
	const end = (ev) => {
		if (!drag)
			return;
		const dr = drag;
		drag = null;
		ghost.setAttribute('d', '');
		if (dr.kind === 'move') {
			const n = ed.node(dr.id);
			const pb = n && n.parentId && box.get(n.parentId);
			if (dr.moved && dr.at)
				ed.move(dr.id, pb ? { x: Math.max(0, dr.at.x -
				    pb.x), y: Math.max(0, dr.at.y - pb.y) } :
				    dr.at);
			else
				select({ node: dr.id });
			return;
		}
		const target = ev.type === 'pointerup' ? nodeAt(ev) : null;
		if (dr.kind === 'connect') {
			if (target && target !== dr.from &&
			    !ed.connect(dr.from, dr.handle, target))
				flash('These two cannot be connected (already, ' +
				    'or it would loop back).', 'error');
			return;
		}
		/* detach: dropped on nothing removes it, on a node moves it */
		const e = dr.edge;
		if (target === e.target)
			return;
		ed.disconnect(e.id);
		if (target && !ed.connect(e.source, e.sourceHandle || 'source',
		    target))
			ed.undo();
	};
	svgEl.addEventListener('pointerup', end);
	svgEl.addEventListener('pointercancel', end);
	svgEl.addEventListener('click', (ev) => {
		const eg = ev.target.closest('.gedge');
		if (eg && !svgEl.dataset.dragged)
			select({ edge: eg.getAttribute('data-id') });
		/* a click on nothing (not a pan) clears the selection */
		else if (!eg && !ev.target.closest('.gnode') &&
		    !svgEl.dataset.dragged && selected)
			select(null);
		delete svgEl.dataset.dragged;
	});
	svgEl.addEventListener('keydown', (ev) => {
		const g = ev.target.closest && ev.target.closest('.gnode');
		if (g && (ev.key === 'Enter' || ev.key === ' ')) {
			ev.preventDefault();
			select({ node: g.getAttribute('data-id') });
		}
	});
	root.addEventListener('keydown', (ev) => {
		const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(
		    ev.target.tagName);
		const mod = ev.ctrlKey || ev.metaKey;
		if (mod && !typing && (ev.key === 'z' || ev.key === 'Z')) {
			ev.preventDefault();
			if (ev.shiftKey)
				ed.redo();
			else
				ed.undo();
		} else if (mod && !typing && ev.key === 'c') {
			copy();
		} else if (mod && !typing && ev.key === 'v') {
			ev.preventDefault();
			paste();
		} else if (mod && !typing && ev.key === 'y') {
			ev.preventDefault();
			ed.redo();
		} else if (!typing && ev.key === 'Escape' && selected) {
			select(null);
		} else if (!typing && (ev.key === 'Delete' ||
		    ev.key === 'Backspace') && selected) {
			ev.preventDefault();
			removeSelected();
		}
	});

	draw();
	requestAnimationFrame(() => pz.fit());
}
