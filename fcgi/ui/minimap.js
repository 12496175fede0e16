/*
 * minimap.js — a small overview of a large graph in a corner of the
 * drawing: every node's box, and the part the view shows as a frame; a
 * click centres the view there (by keyboard, Fit shows the whole graph).
 * It draws from the boxes graph.js's layout() gives; what a click does is
 * the caller's. Imports dom.js only.
 */
import { svg } from './dom.js';

export const MINI_W = 200, MINI_H = 130;

/*
 * minimap(onPick): {el, draw(box, bounds, view)}. box is layout()'s Map of
 * {x, y, w, h}, bounds the graph's {x, y, w, h}, view the part shown
 * ({x, y, w, h} in graph units). onPick(x, y) gets the graph point
 * clicked.
 */
export function minimap(onPick) {
	const root = svg('svg', { class: 'minimap', width: MINI_W,
	    height: MINI_H, role: 'img', 'aria-label': 'Minimap of the graph' });
	const nodes = svg('g', {});
	const frame = svg('rect', { class: 'mini-view' });
	root.append(nodes, frame);
	let tr = { k: 1, x: 0, y: 0 };
	root.addEventListener('pointerdown', (ev) => {
		ev.stopPropagation();
		const r = root.getBoundingClientRect();
		onPick((ev.clientX - r.left - tr.x) / tr.k,
		    (ev.clientY - r.top - tr.y) / tr.k);
	});
	return {
		el: root,
		draw(box, bounds, view) {
			/* the graph and the view together, scaled in */
			const x0 = Math.min(bounds.x, view.x);
			const y0 = Math.min(bounds.y, view.y);
			const x1 = Math.max(bounds.x + bounds.w, view.x + view.w);
			const y1 = Math.max(bounds.y + bounds.h, view.y + view.h);
			const k = Math.min((MINI_W - 8) / Math.max(1, x1 - x0),
			    (MINI_H - 8) / Math.max(1, y1 - y0));
			tr = { k, x: 4 - x0 * k, y: 4 - y0 * k };
			const at = (b) => ({ x: tr.x + b.x * k, y: tr.y + b.y * k,
			    width: Math.max(1, b.w * k),
			    height: Math.max(1, b.h * k) });
			nodes.replaceChildren(...[...box.values()].map((b) =>
			    svg('rect', Object.assign({ class: 'mini-node' },
			    at(b)))));
			const f = at(view);
			for (const a of ['x', 'y', 'width', 'height'])
				frame.setAttribute(a, f[a]);
		},
	};
}
