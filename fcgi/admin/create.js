/*
 * create.js — the "New app" form of the Apps view: a blank app of a mode,
 * or one made from a template. A template is a Dify DSL file of
 * fcgi/admin/templates/ (served at admin/templates/<file>); it goes
 * through the same import route as a file the user picks
 * (/console/api/apps/imports, yaml-content), with the name typed here, so
 * what a template makes is what importing it would make. Then the new
 * app's Edit tab opens.
 */
import { el } from '../ui/dom.js';
import { ApiError } from '../ui/api.js';
import { flash, api, fail, enc } from './page.js';

const MODES = ['workflow', 'advanced-chat', 'chat', 'agent-chat',
    'completion'];

/* The templates: file, name, mode (as its DSL says) and what it does. */
export const TEMPLATES = [
	{ file: 'workflow-llm-code.yml', name: 'Summarise and count',
	    mode: 'workflow', text: 'Workflow: an LLM summarises a text, ' +
	    'a code node counts its words, the End returns both.' },
	{ file: 'chatflow-knowledge.yml', name: 'Knowledge chatbot',
	    mode: 'advanced-chat', text: 'Chatflow: knowledge retrieval, ' +
	    'then an LLM answers from what it found (choose the knowledge ' +
	    'base in the retrieval node).' },
	{ file: 'agent-tools.yml', name: 'Agent with tools',
	    mode: 'advanced-chat', text: 'Chatflow: an agent node with the ' +
	    'built-in time tools (current time, weekday), by function ' +
	    'calling.' },
];

/*
 * Creates an app from template t named name through the import route;
 * returns the import's answer ({id, status, app_id, ...}).
 */
export async function fromTemplate(t, name) {
	const res = await fetch(new URL('templates/' + t.file, location.href),
	    { cache: 'no-cache' });
	if (!res.ok)
		throw new ApiError(res.status, null, 'The template ' + t.file +
		    ' is not there (' + res.status + ').');
	const imp = await api('POST', 'apps/imports', { json: {
	    mode: 'yaml-content', yaml_content: await res.text(),
	    name: name || t.name } });
	if (imp.status !== 'completed' &&
	    imp.status !== 'completed-with-warnings')
		throw new ApiError(400, null, 'The template did not import (' +
		    imp.status + (imp.error ? ': ' + imp.error : '') + ').');
	return imp;
}

/* The form; onCreated() after an app is made (the list reloads). */
export function createForm(onCreated) {
	const name = el('input', { type: 'text', id: 'new-name',
	    required: true, maxlength: 40, autocomplete: 'off' });
	const mode = el('select', { id: 'new-mode' },
	    MODES.map((m) => el('option', { value: m, text: m })));
	const from = el('select', { id: 'new-from' },
	    el('option', { value: '', text: 'Blank' }),
	    TEMPLATES.map((t) => el('option', { value: t.file,
		text: 'Template: ' + t.name })));
	const about = el('p', { class: 'muted small', id: 'new-about',
	    'aria-live': 'polite' });
	const tpl = () => TEMPLATES.find((t) => t.file === from.value);
	let typed = false;
	name.addEventListener('input', () => {
		typed = !!name.value;
	});
	from.addEventListener('change', () => {
		const t = tpl();
		mode.disabled = !!t;
		if (t)
			mode.value = t.mode;
		about.textContent = t ? t.text : 'An empty app of the mode ' +
		    'chosen.';
		if (t && !typed)
			name.value = t.name;
	});
	about.textContent = 'An empty app of the mode chosen.';
	return el('form', { class: 'card', id: 'create-form',
	    on: { submit: async (ev) => {
		ev.preventDefault();
		const t = tpl();
		try {
			let id;
			if (t) {
				id = (await fromTemplate(t, name.value)).app_id;
				flash('Created “' + name.value + '” from the ' +
				    'template.', 'ok');
			} else {
				const app = await api('POST', 'apps', { json: {
				    name: name.value, mode: mode.value } });
				id = app.id;
				flash('Created “' + app.name + '”.', 'ok');
			}
			name.value = '';
			typed = false;
			/* a template is there to be edited: its Edit tab */
			if (t)
				location.hash = '#/app/' + enc(id) + '/edit';
			else
				await onCreated();
		} catch (e) { fail(e); }
	} } },
	    el('h2', { text: 'New app' }),
	    el('div', { class: 'row' },
		el('div', { class: 'grow' }, el('label', {
		    for: 'new-from', text: 'Start from' }), from),
		el('div', { class: 'grow' }, el('label', {
		    for: 'new-name', text: 'Name' }), name),
		el('div', { class: 'grow' }, el('label', {
		    for: 'new-mode', text: 'Mode' }), mode)),
	    about,
	    el('div', { class: 'row end' }, el('button', {
		type: 'submit', class: 'primary', text: 'Create' })));
}
