/*
 * settings.js — the settings pages: sandbox providers, model providers,
 * tools.
 */
import { el, clear } from '../ui/dom.js';
import { badge } from '../ui/components.js';
import { main, page, ask, api, fail, enc, rerender } from './page.js';

/* ====== Settings: sandbox providers ====== */

const SP = 'workspaces/current/sandbox-providers';
const SP1 = 'workspaces/current/sandbox-provider/';

function notAvailable(pane, what) {
	pane.append(el('div', { class: 'msg', id: 'not-available',
	    text: what + ' settings are not available on this server ' +
	    '(its API answered 404).' }));
}

/*
 * A settings card's message area: out (the element), say(msg, kind)
 * to show one, run(fn) to wrap a handler whose error is said there.
 */
function cardOut() {
	const out = el('div', { class: 'out', 'aria-live': 'polite' });
	const say = (msg, kind) => clear(out).append(el('div', {
	    class: 'msg ' + (kind || ''), role: kind === 'error' ?
	    'alert' : null, text: msg }));
	const run = (fn) => async () => {
		try { await fn(); } catch (e) {
			if (!e.auth)
				say(e.message, 'error');
		}
	};
	return { out, say, run };
}

/* A form field for one entry of a provider's config_schema. */
function schemaField(prefix, f, value) {
	const id = prefix + '-' + f.name;
	const labelText = (f.label && (f.label.en_US || f.label)) ||
	    f.name;
	const lab = el('label', { for: id, text: String(labelText) +
	    (f.required ? ' *' : '') });
	const val = value !== undefined && value !== null ? value :
	    f.default !== undefined && f.default !== null ? f.default :
	    '';
	let input;
	if (f.type === 'boolean') {
		input = el('input', { type: 'checkbox', id,
		    name: f.name, checked: !!val });
		return el('label', { class: 'inline' }, input,
		    String(labelText));
	}
	if (f.type === 'select') {
		input = el('select', { id, name: f.name },
		    (f.options || []).map((o) => {
			const v = typeof o === 'object' ? o.value : o;
			const t = typeof o === 'object' ? (o.label &&
			    (o.label.en_US || o.label)) || o.value : o;
			return el('option', { value: String(v),
			    text: String(t) });
		    }));
		input.value = String(val);
	} else
		input = el('input', { type: f.type === 'secret-input' ?
		    'password' : f.type === 'number' ? 'number' : 'text',
		    id, name: f.name, value: String(val),
		    required: !!f.required, autocomplete: 'off',
		    placeholder: (f.placeholder && (f.placeholder.en_US ||
		    f.placeholder)) || null });
	const help = f.help && (f.help.en_US || f.help);
	return el('div', {}, lab, input, help ? el('div',
	    { class: 'muted small', text: String(help) }) : null);
}

function formValues(form, schema) {
	const out = {};
	for (const f of schema) {
		const i = form.elements[f.name];
		if (i)
			out[f.name] = f.type === 'boolean' ? i.checked :
			    i.value;
	}
	return out;
}

export async function renderSandbox() {
	const me = page.view;
	const pane = el('section', { id: 'pane', class: 'providers' });
	clear(main).append(el('h1', { tabindex: -1,
	    text: 'Sandbox Provider' }), pane);
	let list;
	try {
		list = await api('GET', SP);
	} catch (e) {
		if (e.status === 404 || e.status === 405)
			notAvailable(pane, 'Sandbox provider');
		else
			fail(e, pane);
		return;
	}
	if (me !== page.view)
		return;
	if (!Array.isArray(list))
		list = list.data || [];
	if (!list.length)
		pane.append(el('p', { class: 'muted',
		    text: 'This server offers no sandbox providers.' }));
	for (const p of list)
		pane.append(sandboxCard(p));
}

function sandboxCard(p) {
	const type = p.provider_type;
	const schema = p.config_schema || [];
	const { out, say, run } = cardOut();
	const form = el('form', { on: { submit: (ev) => {
		ev.preventDefault();
		run(async () => {
			await api('POST', SP1 + enc(type) + '/config',
			    { json: { config: formValues(form,
			    schema) } });
			say('Saved: the connection works.', 'ok');
			renderSandboxSoon();
		})();
	} } },
	    schema.map((f) => schemaField('sp-' + type, f,
		(p.config || {})[f.name])),
	    el('div', { class: 'row end' },
		el('button', { type: 'button', text: 'Test connection',
		    on: { click: run(async () => {
			const r = await api('POST', SP1 + enc(type) +
			    '/test', { json: { config: formValues(form,
			    schema) } });
			say((r && r.message) || 'The connection works.',
			    'ok');
		    }) } }),
		p.is_active ? null : el('button', { type: 'button',
		    text: 'Activate', on: { click: run(async () => {
			await api('POST', SP1 + enc(type) + '/activate',
			    { json: {} });
			renderSandboxSoon();
		    }) } }),
		p.is_tenant_configured ? el('button', { type: 'button',
		    class: 'danger', text: 'Remove', on: { click:
		    run(async () => {
			if (!await ask({ title: 'Remove the ' + type +
			    ' configuration?', ok: 'Remove',
			    danger: true }))
				return;
			await api('DELETE', SP1 + enc(type) + '/config');
			renderSandboxSoon();
		    }) } }) : null,
		schema.length ? el('button', { type: 'submit',
		    class: 'primary', text: 'Save' }) : null));
	if (!schema.length)
		form.prepend(el('p', { class: 'muted', text:
		    'Nothing to configure.' }));
	return el('div', { class: 'card provider', 'data-type': type },
	    el('h2', {}, type + ' ', p.is_active ? badge('active') : null,
		p.is_tenant_configured ? badge('configured', 'cfg') :
		p.is_system_configured ? badge('system default', 'cfg') :
		null),
	    form, out);
}

function renderSandboxSoon() {
	if (location.hash === '#/settings/sandbox')
		rerender();
}

/* ====== Settings: model providers ====== */

const MP = 'workspaces/current/model-providers';

export async function renderModels() {
	const me = page.view;
	const pane = el('section', { id: 'pane', class: 'providers' });
	clear(main).append(el('h1', { tabindex: -1,
	    text: 'Model Providers' }), pane);
	let res;
	try {
		res = await api('GET', MP);
	} catch (e) {
		if (e.status === 404 || e.status === 405)
			notAvailable(pane, 'Model provider');
		else
			fail(e, pane);
		return;
	}
	if (me !== page.view)
		return;
	const list = Array.isArray(res) ? res : res.data || [];
	for (const p of list)
		pane.append(modelCard(p, false));
	pane.append(modelCard({ name: '', protocol: 'openai',
	    base_url: '', api_key: '', models: [] }, true));
}

function modelCard(p, isNew) {
	const { out, say, run } = cardOut();
	const pre = 'mp-' + (isNew ? 'new' : p.name.replace(/[^\w-]/g,
	    '_'));
	const schema = [
		{ name: 'protocol', type: 'select', label: 'Protocol',
		    options: ['openai', 'anthropic'] },
		{ name: 'base_url', type: 'text-input',
		    label: 'Base URL', required: true },
		{ name: 'api_key', type: 'secret-input',
		    label: 'API key' },
		{ name: 'models', type: 'text-input', label: 'Models ' +
		    '(comma-separated; empty: any)' },
	];
	const vals = Object.assign({}, p, { models: (p.models || [])
	    .join(', ') });
	const name = isNew ? el('input', { type: 'text', id: pre +
	    '-name', required: true, autocomplete: 'off',
	    pattern: '[A-Za-z0-9._\\-]{1,64}|\\*' }) : null;
	const nameOf = () => isNew ? name.value : p.name;
	const body = (form) => {
		const v = formValues(form, schema);
		v.models = v.models.split(',').map((s) => s.trim())
		    .filter(Boolean);
		return v;
	};
	const form = el('form', { on: { submit: (ev) => {
		ev.preventDefault();
		run(async () => {
			await api('POST', MP + '/' + enc(nameOf()),
			    { json: body(form) });
			say('Saved.', 'ok');
			if (location.hash === '#/settings/models')
				rerender();
		})();
	} } },
	    isNew ? el('div', {}, el('label', { for: pre + '-name',
		text: 'Name *' }), name) : null,
	    schema.map((f) => schemaField(pre, f, vals[f.name])),
	    el('div', { class: 'row end' },
		isNew ? null : el('button', { type: 'button',
		    text: 'Test connection', on: { click:
		    run(async () => {
			const r = await api('POST', MP + '/' +
			    enc(nameOf()) + '/test', { json: {} });
			say('It answers' + (r.model ? ' (model ' +
			    r.model + ')' : '') + (r.text ? ': ' +
			    r.text : '.'), 'ok');
		    }) } }),
		!isNew && p.source === 'settings' ? el('button', {
		    type: 'button', class: 'danger', text: 'Remove',
		    on: { click: run(async () => {
			if (!await ask({ title: 'Remove ' + p.name +
			    '?', ok: 'Remove', danger: true }))
				return;
			await api('DELETE', MP + '/' + enc(p.name));
			if (location.hash === '#/settings/models')
				rerender();
		    }) } }) : null,
		el('button', { type: 'submit', class: 'primary',
		    text: isNew ? 'Add' : 'Save' })));
	return el('div', { class: 'card provider', 'data-name': p.name },
	    el('h2', {}, isNew ? 'Add a provider' : p.name + ' ',
		isNew ? null : badge(p.configured ? 'configured' :
		'not configured', p.configured ? 'active' : ''),
		isNew || !p.source ? null : el('span', {
		    class: 'muted small', text: ' ' + p.source })),
	    form, out);
}

/* ====== Settings: tools ====== */

const TP = 'workspaces/current/tool-provider/builtin/';
/* 1 when a provider has credentials to set */
const needs = (p) => (p.credentials_schema || []).length > 0;

export async function renderTools() {
	const me = page.view;
	const pane = el('section', { id: 'pane', class: 'providers' });
	clear(main).append(el('h1', { tabindex: -1, text: 'Tools' }),
	    pane);
	let list, usage = {};
	try {
		list = await api('GET', 'workspaces/current/tools/builtin');
		usage = await api('GET',
		    'workspaces/current/tool-providers/usage');
	} catch (e) {
		if (e.status === 404 || e.status === 405)
			notAvailable(pane, 'Tool');
		else
			fail(e, pane);
		return;
	}
	if (me !== page.view)
		return;
	/* the providers to set up first, then the rest, by name */
	list.sort((a, b) => (needs(b) - needs(a)) ||
	    a.name.localeCompare(b.name));
	for (const p of list)
		pane.append(toolCard(p, usage[p.name] || []));
}

function toolCard(p, apps) {
	const schema = (p.credentials_schema || []).map((f) =>
	    Object.assign({}, f, { required: !!f.required }));
	const label = (p.label && (p.label.en_US || p.label)) || p.name;
	const { out, say, run } = cardOut();
	const pre = 'tp-' + p.name.replace(/[^\w-]/g, '_');
	const creds = p.team_credentials || {};
	const fields = schema.some((f) => f.name === 'base_url') ?
	    schema : schema.concat([{ name: 'base_url',
	    type: 'text-input', label: 'Base URL (optional: a ' +
	    'self-hosted server or another endpoint)' }]);
	const form = el('form', { on: { submit: (ev) => {
		ev.preventDefault();
		run(async () => {
			await api('POST', TP + enc(p.name) + '/update',
			    { json: { credentials: formValues(form,
			    fields) } });
			say('Saved.', 'ok');
		})();
	} } },
	    fields.map((f) => schemaField(pre, f, creds[f.name])),
	    el('div', { class: 'row end' },
		p.has_test === false ? null : el('button', {
		    type: 'button', text: 'Test', on: { click:
		    run(async () => {
			await api('POST', TP + enc(p.name) +
			    '/credentials/test', { json: {
			    credentials: formValues(form, fields) } });
			say('The provider answered.', 'ok');
		    }) } }),
		p.allow_delete ? el('button', { type: 'button',
		    class: 'danger', text: 'Remove', on: { click:
		    run(async () => {
			if (!await ask({ title: 'Remove the ' + label +
			    ' credentials?', ok: 'Remove',
			    danger: true }))
				return;
			await api('POST', TP + enc(p.name) + '/delete',
			    { json: {} });
			if (location.hash === '#/settings/tools')
				rerender();
		    }) } }) : null,
		el('button', { type: 'submit', class: 'primary',
		    text: 'Save' })));
	const tools = (p.tools || []).map((t) => t.name).join(', ');
	return el('div', { class: 'card provider', 'data-name': p.name },
	    el('h2', {}, label + ' ', p.unsupported ?
		badge('unsupported') : !needs(p) ? null :
		badge(p.is_team_authorization ? 'configured' :
		'needs credentials', p.is_team_authorization ? 'active' :
		'')),
	    p.unsupported ? el('p', { class: 'muted', text:
		'Not supported by flowcgi: ' + p.unsupported }) :
		el('p', { class: 'muted small', text: 'Tools: ' +
		(tools || 'none') }),
	    el('p', { class: 'small uses', text: apps.length ?
		'Used by: ' + apps.map((a) => a.name).join(', ') :
		'No app uses it.' }),
	    p.unsupported ? null : form, out);
}

/* What an import or a stored app names that will not run here. */
