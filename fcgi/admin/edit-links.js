/*
 * edit-links.js — the Edit tab's words for edges: a source handle's label
 * (IF, ELIF n, ELSE, CLASS n, FAIL) and the selected node's list of next
 * nodes with Disconnect and Connect buttons, the keyboard's way to edit
 * edges.
 */
import { el } from '../ui/dom.js';
import { titleOf } from '../ui/graph.js';
import { sourceHandles } from '../ui/editor.js';
import { flash } from './page.js';

/* A source handle's label: IF for the first case, ELIF n, ELSE. */
export function handleLabel(n, h) {
	if (h === 'false')
		return 'ELSE';
	if (h === 'fail-branch')
		return 'FAIL';
	const d = n.data || {};
	const i = (d.cases || []).findIndex((c) => c.case_id === h);
	if (i >= 0)
		return i === 0 ? 'IF' : 'ELIF ' + i;
	const k = (d.classes || []).findIndex((c) => c.id === h);
	if (d.type === 'question-classifier' && k >= 0)
		return 'CLASS ' + (k + 1);
	return h === 'source' ? '' : h;
}

/* Node n's outgoing edges with a Disconnect button each, and a handle
 * connected to a node chosen from a list: the edges by keyboard. */
export function edgesOf(ed, n) {
	const out = ed.edges().filter((e) => e.source === n.id);
	const hs = sourceHandles(n);
	const box_ = el('fieldset', { class: 'pset edges-of' },
	    el('legend', { text: 'Next nodes' }));
	for (const e of out) {
		const t = ed.node(e.target);
		box_.append(el('div', { class: 'row prow' },
		    (handleLabel(n, e.sourceHandle) || 'next') + ' → ' +
		    (t ? titleOf(t) : e.target), el('button', {
			type: 'button', class: 'e-del',
			text: 'Disconnect', on: { click: () =>
			ed.disconnect(e.id) } })));
	}
	if (hs.length) {
		const h = el('select', { 'aria-label': 'Handle',
		    class: 'c-handle' }, hs.map((x) => el('option',
		    { value: x, text: handleLabel(n, x) || 'next' })));
		const tg = el('select', { 'aria-label': 'Target node',
		    class: 'c-target' }, ed.nodes().filter((m) =>
		    m.id !== n.id).map((m) => el('option',
		    { value: m.id, text: titleOf(m) })));
		box_.append(el('div', { class: 'row prow' }, h, tg,
		    el('button', { type: 'button', class: 'c-go',
			text: 'Connect', on: { click: () => {
			if (!ed.connect(n.id, h.value, tg.value))
				flash('These two cannot be connected ' +
				    '(already, or it would loop back).',
				    'error');
		    } } })));
	}
	return box_;
}
