/*
 * dom.js — building elements without ever parsing HTML: every string goes
 * in as text (textContent or a text node), so nothing a server, a user or a
 * model wrote can become markup. Shared by the admin page, the editor and
 * the Web App; imports nothing.
 */

export const SVG_NS = 'http://www.w3.org/2000/svg';

/* add(parent, kids): appends kids (nested arrays, nodes, strings; null,
 * undefined and false are skipped). Returns parent. */
export function add(parent, kids) {
	for (const k of kids.flat(Infinity)) {
		if (k === null || k === undefined || k === false)
			continue;
		parent.append(k instanceof Node ? k : String(k));
	}
	return parent;
}

/*
 * el('a', {href, class, text, on: {click: fn}}, 'text', child...): an
 * element. A non-string value of a known property is set as the property
 * (checked, disabled, hidden...); anything else is an attribute; true is
 * an empty attribute, null/undefined/false none.
 */
export function el(tag, attrs, ...kids) {
	const e = document.createElement(tag);
	for (const [k, v] of Object.entries(attrs || {})) {
		if (v === undefined || v === null || v === false)
			continue;
		if (k === 'class')
			e.className = v;
		else if (k === 'text')
			e.textContent = v;
		else if (k === 'on')
			for (const [ev, fn] of Object.entries(v))
				e.addEventListener(ev, fn);
		else if (k in e && typeof v !== 'string')
			e[k] = v;
		else if (k === 'value')
			e.value = v;
		else
			e.setAttribute(k, v === true ? '' : String(v));
	}
	add(e, kids);
	return e;
}

/* svg('rect', {width: 4}, kids...): an SVG element, attributes only. */
export function svg(tag, attrs, ...kids) {
	const e = document.createElementNS(SVG_NS, tag);
	for (const [k, v] of Object.entries(attrs || {}))
		if (v !== undefined && v !== null)
			e.setAttribute(k, String(v));
	for (const c of kids)
		if (c !== null && c !== undefined)
			e.append(c instanceof Node ? c : String(c));
	return e;
}

/* Removes every child of e; returns e. */
export function clear(e) {
	while (e.firstChild)
		e.firstChild.remove();
	return e;
}

/* A fresh id for a label's for= (unique within the page). */
let idSeq = 0;
export function uid(prefix) {
	return (prefix || 'u') + '-' + (++idSeq).toString(36);
}
