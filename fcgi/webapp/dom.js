// dom.js — the Web App's shorthand over ../ui/dom.js: h('button.cls',
// {onclick, attrs}, children...) is el() with the classes in the tag and
// on<event> attributes as listeners; and the line icons. Nothing a user
// or an answer wrote becomes markup (el() sets text only).

import { el, svg } from '../ui/dom.js';

export { clear } from '../ui/dom.js';

export function h(tag, attrs, ...kids) {
  const [name, ...cls] = tag.split('.');
  const a = {}, on = {};
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.startsWith('on') && typeof v === 'function') on[k.slice(2)] = v;
    else a[k] = v;
  }
  if (cls.length) a.class = cls.join(' ');
  a.on = on;
  return el(name || 'div', a, ...kids);
}

const PATHS = {
  like: 'M7 10v10H4V10zm2 10h8.5a2 2 0 0 0 2-1.6l1.3-6A2 2 0 0 0 18.8 10H14l.8-4a1.6 1.6 0 0 0-3-1L9 10z',
  dislike: 'M17 14V4h3v10zm-2-10H6.5a2 2 0 0 0-2 1.6l-1.3 6A2 2 0 0 0 5.2 14H10l-.8 4a1.6 1.6 0 0 0 3 1L15 14z',
  edit: 'M4 20h4L19 9l-4-4L4 16zM14 6l4 4',
  trash: 'M5 7h14M10 7V4h4v3M7 7l1 13h8l1-13',
  menu: 'M4 6h16M4 12h16M4 18h16',
  pin: 'M9 4h6l-1 6 4 4H6l4-4zM12 14v6',
  attach: 'M16 7l-7 7a2 2 0 0 0 3 3l7-7a4 4 0 0 0-6-6l-7 7a6 6 0 0 0 8 8l6-6',
  link: 'M10 14a4 4 0 0 0 6 0l3-3a4 4 0 0 0-6-6l-1 1M14 10a4 4 0 0 0-6 0l-3 3a4 4 0 0 0 6 6l1-1',
  mic: 'M12 4a3 3 0 0 0-3 3v5a3 3 0 0 0 6 0V7a3 3 0 0 0-3-3zM6 11a6 6 0 0 0 12 0M12 17v3',
  speaker: 'M4 10v4h4l5 4V6L8 10zM16 9a4 4 0 0 1 0 6M18.5 6.5a8 8 0 0 1 0 11',
};

// A small line icon (aria-hidden: its button carries the label).
export function icon(name) {
  return svg('svg', { viewBox: '0 0 24 24', width: 16, height: 16, 'aria-hidden': 'true' },
    svg('path', { d: PATHS[name], fill: 'none', stroke: 'currentColor', 'stroke-width': 1.8,
      'stroke-linejoin': 'round', 'stroke-linecap': 'round' }));
}
