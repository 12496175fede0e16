/*
 * webapp-card.js — the Web App card of the API keys tab: the site (enable,
 * link, embed, settings, code).
 */
import { el, add, clear } from '../ui/dom.js';
import { page, flash, ask, token, api, fail, enc } from './page.js';

/* --- the Web App: its site (enable, link, embed, settings, code) --- */

export async function webAppCard(app, pane, me) {
	const base = 'apps/' + enc(app.id);
	const card = el('section', { class: 'card', id: 'webapp-card',
	    'aria-labelledby': 'webapp-title' });
	const seg = app.mode === 'workflow' || app.mode === 'completion' ?
	    app.mode : 'chat';
	const render = (site) => {
		const root = new URL((site.app_base_url || '') + '/',
		    location.origin + '/').href.replace(/\/$/, '');
		const link = root + '/' + seg + '/' + site.code;
		const script = '<script>\n window.difyChatbotConfig = {\n' +
		    "  token: '" + site.code + "',\n  baseUrl: '" + root +
		    "',\n  inputs: {},\n  systemVariables: {},\n" +
		    '  userVariables: {},\n }\n</script>\n<script src="' +
		    root + '/embed.min.js" id="' + site.code +
		    '" defer></script>';
		const iframe = '<iframe src="' + root + '/chatbot/' +
		    site.code + '" style="width: 100%; height: 100%; ' +
		    'min-height: 700px" frameborder="0" ' +
		    'allow="microphone"></iframe>';
		const field = (name, label, value) => [
		    el('label', { for: 'site-' + name, text: label }),
		    el('input', { id: 'site-' + name, name, type: 'text', value:
			value || '' })];
		const snippet = (id, label, text) => {
			const ta = el('textarea', { id, readonly: true,
			    rows: 4, text });
			return [el('label', { for: id, text: label }), ta,
			    el('button', { type: 'button', text: 'Copy',
				on: { click: () => copyText(text, ta) } })];
		};
		const enabled = el('input', { type: 'checkbox',
		    id: 'site-enabled', checked: !!app.enable_site });
		enabled.addEventListener('change', async () => {
			try {
				await api('POST', base + '/site-enable',
				    { json: { enable_site: enabled.checked } });
				app.enable_site = enabled.checked;
				flash(enabled.checked ? 'The Web App is on.' :
				    'The Web App is off.', 'ok');
			} catch (e) { fail(e); }
		});
		const lang = el('select', { id: 'site-default_language',
		    name: 'default_language' }, [['en-US', 'English'],
		    ['zh-Hans', '简体中文']].map(([v, t]) => el('option',
		    { value: v, text: t, selected:
		    site.default_language === v })));
		const steps = el('input', { type: 'checkbox', id:
		    'site-show_workflow_steps', checked:
		    !!site.show_workflow_steps });
		const form = el('form', { id: 'site-form', on: { submit:
		    async (ev) => {
			ev.preventDefault();
			const f = new FormData(form);
			const json = { show_workflow_steps: steps.checked };
			for (const k of ['title', 'description',
			    'copyright', 'privacy_policy',
			    'custom_disclaimer', 'default_language'])
				json[k] = f.get(k) || (k === 'title' ?
				    app.name : null);
			if (f.get('passcode') !== '' || f.get('nopass'))
				json.passcode = f.get('nopass') ? '' :
				    f.get('passcode');
			try {
				render(await api('POST', base + '/site',
				    { json }));
				flash('Web App settings saved.', 'ok');
			} catch (e) { fail(e); }
		} } },
		    field('title', 'Title', site.title),
		    field('description', 'Description',
			site.description),
		    el('label', { for: 'site-default_language',
			text: 'Language' }), lang,
		    field('copyright', 'Copyright', site.copyright),
		    field('privacy_policy', 'Privacy policy URL',
			site.privacy_policy),
		    field('custom_disclaimer', 'Disclaimer',
			site.custom_disclaimer),
		    el('label', {}, steps, ' Show workflow steps'),
		    el('label', { for: 'site-passcode', text:
			'Passcode' + (site.passcode_set ? ' (set; ' +
			'type a new one to change it)' : ' (none)') }),
		    el('input', { id: 'site-passcode', name:
			'passcode', type: 'password', autocomplete:
			'new-password' }),
		    site.passcode_set ? el('label', {}, el('input', {
			type: 'checkbox', name: 'nopass', value: '1' }),
			' Remove the passcode') : null,
		    el('div', { class: 'row end' }, el('button', {
			type: 'submit', class: 'primary',
			text: 'Save' })));
		add(clear(card), [
		    el('h2', { id: 'webapp-title', text: 'Web App' }),
		    el('label', {}, enabled, ' Enabled: end users can ' +
			'open the link and use the app'),
		    el('p', {}, 'Link: ', el('a', { id: 'site-link',
			href: link, target: '_blank', rel: 'noopener',
			text: link })),
		    snippet('site-script', 'Embed as a chat bubble ' +
			'(Dify\'s snippet)', script),
		    snippet('site-iframe', 'Embed as an iframe', iframe),
		    form,
		    el('div', { class: 'row' }, el('button', {
			type: 'button', class: 'danger',
			id: 'site-reset', text: 'Reset the link',
			on: { click: async () => {
			try {
				if (!await ask({ title: 'Reset the ' +
				    'link?', text: 'The old link and ' +
				    'every embed using it stop ' +
				    'working.', ok: 'Reset',
				    danger: true }))
					return;
				render(await api('POST', base +
				    '/site/access-token-reset'));
			} catch (e) { fail(e); }
		    } } }))]);
	};
	try {
		const site = await api('GET', base + '/site');
		if (me !== page.view)
			return;
		render(site);
		pane.append(card);
	} catch (e) { fail(e); }
}

export async function copyText(text, node) {
	try {
		await navigator.clipboard.writeText(text);
		flash('Copied to the clipboard.', 'ok');
	} catch (e) {
		/* No clipboard access: select it for Ctrl+C. */
		const r = document.createRange();
		r.selectNodeContents(node);
		const s = getSelection();
		s.removeAllRanges();
		s.addRange(r);
		flash('Selected: press Ctrl+C to copy.');
	}
}
