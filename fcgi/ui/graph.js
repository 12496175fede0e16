/*
 * graph.js — a workflow drawn from its DSL as SVG: Dify's block names and
 * colours, a layout (the DSL's positions, or by depth when a DSL written by
 * hand has none), a node's box and an edge's curve, pan and zoom. It draws;
 * what a page does with the drawing (the admin page's view and edits, the
 * editor) is its own module. Imports dom.js only.
 *
 * - Each node of graph.nodes where the DSL put it (position; a child of an
 *   iteration or a loop relative to its container, which is drawn around
 *   its children), the edges as curves from a handle on a node's right
 *   side to the next one's left.
 */
import { svg } from './dom.js';


/* Dify's block names and colours, and a glyph for each type. */
export const TYPES = {
	start: ['Start', '#2970FF', '▶'],
	end: ['End', '#F79009', '■'],
	answer: ['Answer', '#F79009', '✉'],
	llm: ['LLM', '#6172F3', '✦'],
	agent: ['Agent', '#6172F3', '✧'],
	'knowledge-retrieval': ['Knowledge Retrieval', '#16B364', '▤'],
	'question-classifier': ['Question Classifier', '#16B364', '?'],
	'if-else': ['IF/ELSE', '#06AED4', '◇'],
	code: ['Code', '#2E90FA', '{}'],
	'template-transform': ['Template', '#2E90FA', '¶'],
	'http-request': ['HTTP Request', '#875BF7', '⇄'],
	tool: ['Tool', '#2E90FA', '⚒'],
	'variable-aggregator': ['Variable Aggregator', '#2E90FA', '⊕'],
	'variable-assigner': ['Variable Aggregator', '#2E90FA', '⊕'],
	assigner: ['Variable Assigner', '#2E90FA', '≔'],
	'parameter-extractor': ['Parameter Extractor', '#2E90FA', '⋯'],
	'document-extractor': ['Doc Extractor', '#16B364', '≡'],
	'list-operator': ['List Operator', '#06AED4', '☰'],
	iteration: ['Iteration', '#06AED4', '↻'],
	'iteration-start': ['', '#06AED4', '▸'],
	loop: ['Loop', '#06AED4', '↺'],
	'loop-start': ['', '#06AED4', '▸'],
	'loop-end': ['Exit Loop', '#06AED4', '□'],
	command: ['Command', '#667085', '$'],
	'file-upload': ['File Upload', '#16B364', '↑'],
};
export const NODE_W = 244, NODE_H = 60, GAP_X = 90, GAP_Y = 40, PAD = 24;


export const typeOf = (n) => (n.data && n.data.type) ||
    (n.type === 'custom-note' ? 'note' : n.type) || '?';
export const info = (t) => TYPES[t] || [t, '#667085', '•'];
export const titleOf = (n) => (n.data && n.data.title) || info(typeOf(n))[0] ||
    n.id;
export const isContainer = (t) => t === 'iteration' || t === 'loop';
export const short = (s, n) => s.length > n ? s.slice(0, n - 1) + '…' : s;
export const pretty = (v) => typeof v === 'string' ? v :
    JSON.stringify(v, null, 2);

/* A small icon: the type's glyph on its colour. */
export function icon(t, size) {
	const [, colour, glyph] = info(t);
	return svg('svg', { class: 'gicon', width: size, height: size,
	    viewBox: '0 0 24 24', 'aria-hidden': 'true' },
	    svg('rect', { width: 24, height: 24, rx: 6, fill: colour }),
	    svg('text', { x: 12, y: 16.5, 'text-anchor': 'middle',
		'font-size': 13, fill: '#fff' }, glyph));
}

/* ====== Layout ====== */

/*
 * Boxes {x, y, w, h} (absolute) of every node. Positions from the DSL
 * when every node has one; else by depth along the edges, children of
 * a container inside it.
 */
export function layout(nodes, edges) {
	const box = new Map();
	const kids = new Map();
	for (const n of nodes) {
		const p = n.parentId || '';
		if (!kids.has(p))
			kids.set(p, []);
		kids.get(p).push(n);
	}
	/* a container keeps the DSL's size; a node shows two lines,
	 * whatever Dify's editor showed in it */
	const sized = (n) => {
		const t = typeOf(n);
		if (/-start$/.test(t))
			return { w: 44, h: 48 };
		if (isContainer(t) || t === 'note')
			return { w: Number(n.width) > 0 ?
			    Number(n.width) : NODE_W,
			    h: Number(n.height) > 0 ?
			    Number(n.height) : NODE_H };
		return { w: NODE_W, h: NODE_H };
	};
	const placed = nodes.length > 0 && nodes.every((n) =>
	    n.position && isFinite(n.position.x) &&
	    isFinite(n.position.y));
	if (placed) {
		const abs = (n, seen) => {
			if (box.has(n.id))
				return box.get(n.id);
			const s = sized(n);
			let x = Number(n.position.x), y = Number(n.position.y);
			const par = nodes.find((m) => m.id === n.parentId);
			if (par && !seen.has(par.id)) {
				seen.add(n.id);
				const pb = abs(par, seen);
				x += pb.x;
				y += pb.y;
			}
			const b = { x, y, w: s.w, h: s.h };
			box.set(n.id, b);
			return b;
		};
		for (const n of nodes)
			abs(n, new Set());
		/* a container at least holds its children */
		for (const n of nodes) {
			if (!isContainer(typeOf(n)))
				continue;
			const b = box.get(n.id);
			for (const c of kids.get(n.id) || []) {
				const cb = box.get(c.id);
				b.w = Math.max(b.w, cb.x + cb.w - b.x + PAD);
				b.h = Math.max(b.h, cb.y + cb.h - b.y + PAD);
			}
		}
		return box;
	}
	/* by depth: each group of siblings on its own, inside out */
	const rel = new Map();
	const place = (parent) => {
		const list = kids.get(parent) || [];
		const ids = new Set(list.map((n) => n.id));
		const depth = new Map(list.map((n) => [n.id, 0]));
		for (let round = 0; round < list.length; round++)
			for (const e of edges)
				if (ids.has(e.source) && ids.has(e.target) &&
				    depth.get(e.target) <
				    depth.get(e.source) + 1 &&
				    depth.get(e.source) + 1 < list.length)
					depth.set(e.target,
					    depth.get(e.source) + 1);
		const size = new Map();
		for (const n of list) {
			let s = sized(n);
			if (isContainer(typeOf(n))) {
				const inner = place(n.id);
				s = { w: Math.max(s.w, inner.w + 2 * PAD),
				    h: Math.max(s.h, inner.h + 2 * PAD +
				    NODE_H) };
			}
			size.set(n.id, s);
		}
		const cols = [];
		for (const n of list) {
			const d = depth.get(n.id);
			(cols[d] = cols[d] || []).push(n);
		}
		let x = 0, w = 0, h = 0;
		for (const col of cols.filter(Boolean)) {
			let y = 0, cw = 0;
			for (const n of col) {
				const s = size.get(n.id);
				rel.set(n.id, { x, y, w: s.w, h: s.h,
				    parent });
				y += s.h + GAP_Y;
				cw = Math.max(cw, s.w);
			}
			h = Math.max(h, y - GAP_Y);
			x += cw + GAP_X;
			w = x - GAP_X;
		}
		return { w, h };
	};
	place('');
	const abs = (id) => {
		if (box.has(id))
			return box.get(id);
		const r = rel.get(id);
		let x = r.x, y = r.y;
		if (r.parent) {
			const pb = abs(r.parent);
			x += pb.x + PAD;
			y += pb.y + PAD + NODE_H;
		}
		const b = { x, y, w: r.w, h: r.h };
		box.set(id, b);
		return b;
	};
	for (const n of nodes)
		if (rel.has(n.id))
			abs(n.id);
	return box;
}

/* ====== Drawing ====== */

/* The depth of n among containers (0 at the top). */
export function depthOf(n, byId) {
	let d = 0;
	for (let p = byId.get(n.parentId); p && d < 32;
	    p = byId.get(p.parentId))
		d++;
	return d;
}

export function drawNode(n, b) {
	const t = typeOf(n);
	const title = titleOf(n);
	const g = svg('g', { class: 'gnode' + (isContainer(t) ?
	    ' container' : '') + (t === 'note' ? ' note' : ''),
	    'data-id': n.id, 'data-type': t, tabindex: 0,
	    role: 'button', 'aria-label': title + ' (' + t + ')',
	    transform: 'translate(' + b.x + ',' + b.y + ')' });
	g.append(svg('title', {}, title + ' — ' + t + ' ' + n.id));
	if (/-start$/.test(t)) {
		g.append(svg('rect', { class: 'gbox', width: b.w,
		    height: b.h, rx: 12 }));
		const ic = icon(t, 24);
		ic.setAttribute('x', (b.w - 24) / 2);
		ic.setAttribute('y', (b.h - 24) / 2);
		g.append(ic);
		return g;
	}
	if (t === 'note') {
		g.append(svg('rect', { class: 'gbox', width: b.w,
		    height: b.h, rx: 8 }),
		    svg('text', { class: 'gsub', x: 12, y: 24 },
			short(noteText(n.data && n.data.text), 40)));
		return g;
	}
	const head = isContainer(t) ? NODE_H : b.h;
	g.append(svg('rect', { class: 'gbox', width: b.w, height: b.h,
	    rx: 14 }));
	const ic = icon(t, 24);
	ic.setAttribute('x', 12);
	ic.setAttribute('y', Math.min(head, NODE_H) / 2 - 12);
	g.append(ic);
	const sub = subtitle(n, t);
	const ty = Math.min(head, NODE_H) / 2 + (sub ? -2 : 5);
	g.append(svg('text', { class: 'gtitle', x: 44, y: ty },
	    short(title, 24)));
	if (sub)
		g.append(svg('text', { class: 'gsub', x: 44, y: ty + 16 },
		    short(sub, 30)));
	g.append(svg('text', { class: 'gstat', x: b.w - 10,
	    y: 16, 'text-anchor': 'end' }));
	return g;
}

/* What the node's second line says: its model, tool or type. */
export function subtitle(n, t) {
	const d = n.data || {};
	if ((t === 'llm' || t === 'question-classifier' ||
	    t === 'parameter-extractor') && d.model && d.model.name)
		return d.model.name + (d.computer_use ? ' · Agent' : '');
	if (t === 'tool' && (d.tool_label || d.tool_name))
		return d.tool_label || d.tool_name;
	if (t === 'agent' && d.agent_strategy_label)
		return d.agent_strategy_label;
	return info(t)[0] !== titleOf(n) ? info(t)[0] : '';
}

/*
 * The curve of edge e between its boxes, with a label for a handle;
 * handles holds the source's distinct handles, each leaving at its
 * own height (IF above ELSE, as in Dify); label false: none (the editor
 * labels its handles instead).
 */
export function drawEdge(e, box, handles, label) {
	const s = box.get(e.source), t = box.get(e.target);
	if (!s || !t)
		return null;
	const hs = handles.get(e.source) || [];
	const hi = Math.max(0, hs.indexOf(e.sourceHandle || 'source'));
	const x1 = s.x + s.w, y1 = s.y + Math.min(s.h, NODE_H) *
	    (hi + 1) / (hs.length + 1 || 2);
	const x2 = t.x, y2 = t.y + Math.min(t.h, NODE_H) / 2;
	const dx = Math.max(40, Math.abs(x2 - x1) / 2);
	const g = svg('g', { class: 'gedge', 'data-source': e.source,
	    'data-target': e.target });
	g.append(svg('path', { d: 'M' + x1 + ',' + y1 + ' C' +
	    (x1 + dx) + ',' + y1 + ' ' + (x2 - dx) + ',' + y2 + ' ' +
	    x2 + ',' + y2 }));
	const h = e.sourceHandle;
	if (label === undefined && h && h !== 'source')
		g.append(svg('text', { class: 'glabel', x: x1 + 6,
		    y: y1 - 5 }, short(h === 'true' ? 'IF' :
		    h === 'false' ? 'ELSE' : h === 'fail-branch' ?
		    'FAIL' : h, 10)));
	return g;
}

/* ====== Pan and zoom ====== */

/*
 * Pan (drag the background) and zoom (the wheel) of viewport group vp in
 * svgEl; bounds is the graph's {x, y, w, h}, read at each fit().
 * onView(), when given, is called after each change of the view. Returns
 * {fit(), zoom(f), center(x, y), view() -> the part shown in graph units,
 * state}.
 */
export function panZoom(svgEl, vp, bounds, onView) {
	const st = { k: 1, x: 0, y: 0 };
	const apply = () => {
		vp.setAttribute('transform', 'translate(' + st.x + ',' + st.y +
		    ') scale(' + st.k + ')');
		if (onView)
			onView();
	};
	const zoomAt = (f, cx, cy) => {
		const k = Math.min(2.5, Math.max(0.1, st.k * f));
		st.x = cx - (cx - st.x) * (k / st.k);
		st.y = cy - (cy - st.y) * (k / st.k);
		st.k = k;
		apply();
	};
	const fit = () => {
		const r = svgEl.getBoundingClientRect();
		const w = r.width || 800, h = r.height || 500;
		const k = Math.min(1.2, Math.max(0.1, Math.min(
		    (w - 40) / Math.max(1, bounds.w),
		    (h - 40) / Math.max(1, bounds.h))));
		st.k = k;
		st.x = (w - bounds.w * k) / 2 - bounds.x * k;
		st.y = (h - bounds.h * k) / 2 - bounds.y * k;
		apply();
	};
	svgEl.addEventListener('wheel', (ev) => {
		ev.preventDefault();
		const r = svgEl.getBoundingClientRect();
		zoomAt(ev.deltaY < 0 ? 1.15 : 1 / 1.15,
		    ev.clientX - r.left, ev.clientY - r.top);
	}, { passive: false });
	let drag = null;
	svgEl.addEventListener('pointerdown', (ev) => {
		if (ev.target.closest('.gnode:not(.container)'))
			return;
		drag = { px: ev.clientX, py: ev.clientY, x: st.x,
		    y: st.y, moved: false, id: ev.pointerId };
	});
	svgEl.addEventListener('pointermove', (ev) => {
		if (!drag)
			return;
		st.x = drag.x + ev.clientX - drag.px;
		st.y = drag.y + ev.clientY - drag.py;
		/* captured once it moves: a click stays a click */
		if (!drag.moved && Math.abs(ev.clientX - drag.px) +
		    Math.abs(ev.clientY - drag.py) > 4) {
			drag.moved = true;
			svgEl.setPointerCapture(drag.id);
		}
		apply();
	});
	const end = () => {
		if (drag && drag.moved)
			svgEl.dataset.dragged = '1';
		drag = null;
	};
	svgEl.addEventListener('pointerup', end);
	svgEl.addEventListener('pointercancel', end);
	const size = () => {
		const r = svgEl.getBoundingClientRect();
		return { w: r.width || 800, h: r.height || 500 };
	};
	return {
		fit,
		zoom: (f) => {
			const r = svgEl.getBoundingClientRect();
			zoomAt(f, r.width / 2, r.height / 2);
		},
		center: (x, y) => {
			const s = size();
			st.x = s.w / 2 - x * st.k;
			st.y = s.h / 2 - y * st.k;
			apply();
		},
		view: () => {
			const s = size();
			return { x: -st.x / st.k, y: -st.y / st.k,
			    w: s.w / st.k, h: s.h / st.k };
		},
		state: st,
	};
}

/* A note's text: Dify keeps it as Lexical's JSON state ({root: {children:
 * [paragraph {children: [text {text}]}]}}); the text nodes, paragraphs
 * joined by a space. Plain text (older notes) is itself. */
export function noteText(raw) {
	let st;
	const out = [];
	const walk = (node) => {
		if (!node || typeof node !== 'object')
			return;
		if (typeof node.text === 'string')
			out.push(node.text);
		if (Array.isArray(node.children)) {
			for (const ch of node.children)
				walk(ch);
			out.push(' ');
		}
	};
	if (typeof raw !== 'string' || raw === '')
		return '';
	try {
		st = JSON.parse(raw);
	} catch (e) {
		st = null;
	}
	if (!st || typeof st !== 'object' || !st.root)
		return raw.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();
	walk(st.root);
	return out.join('').replace(/\s+/g, ' ').trim();
}
