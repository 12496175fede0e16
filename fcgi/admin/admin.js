/*
 * flowcgi admin page. An ES module (no build step, no framework, nothing
 * from elsewhere): the pieces every page shares come from ../ui/ (dom,
 * api, router, components, graph drawing), the graph view from graph.js.
 *
 * - Every piece of text from the server goes in with textContent (el()
 *   never parses HTML), so nothing it sends can become markup.
 * - The API is found relative to this page: the page is <prefix>/admin/,
 *   the API <prefix>/console/api/, whatever the prefix is.
 * - The admin token lives in sessionStorage; a 401 from any call forgets it
 *   and returns to the sign-in form.
 * - Views are chosen by the URL fragment (#/apps, #/app/<id>/<tab>,
 *   #/knowledge, #/knowledge/<id>, #/settings/sandbox,
 *   #/settings/models).
 */
import { el, clear } from '../ui/dom.js';
import { route, onRoute } from '../ui/router.js';
import { TOKEN, main, nav, page, flash, token, api, fail, setHooks } from
    './page.js';
import { renderApps } from './apps.js';
import { renderApp } from './app.js';
import { renderSandbox, renderModels, renderTools } from './settings.js';
import { renderKnowledge, renderDataset } from './knowledge.js';

/* ====== Sign-in ====== */

function signOut(why) {
	sessionStorage.removeItem(TOKEN);
	renderSignIn(why);
}

function renderSignIn(why) {
	++page.view;
	nav.hidden = true;
	flash('');
	const input = el('input', { type: 'password', id: 'token',
	    name: 'token', autocomplete: 'off', required: true,
	    spellcheck: 'false' });
	const err = el('div', { id: 'signin-error' });
	if (why)
		err.append(el('div', { class: 'msg error', role: 'alert',
		    text: why }));
	const form = el('form', { class: 'card', id: 'signin',
	    on: { submit: async (ev) => {
		ev.preventDefault();
		sessionStorage.setItem(TOKEN, input.value.trim());
		try {
			await api('GET', 'apps?page=1&limit=1');
		} catch (e) {
			if (!e.auth)
				fail(e, err);
			return;
		}
		if (!location.hash || location.hash === '#/signin')
			location.hash = '#/apps';
		else
			render();
	} } },
	    el('h1', { text: 'Sign in' }),
	    el('p', { class: 'muted', text: 'Enter the admin token ' +
		'(the command "flowcgi token" prints it).' }),
	    el('label', { for: 'token', text: 'Admin token' }), input,
	    el('div', { class: 'row end' }, el('button', {
		type: 'submit', class: 'primary', text: 'Sign in' })),
	    err);
	clear(main).append(el('div', { class: 'signin' }, form));
	input.focus();
}

document.getElementById('signout').addEventListener('click', () => {
	signOut('');
	flash('Signed out.', 'ok');
});


/* ====== Router ====== */

function render() {
	const my = ++page.view;
	if (!token()) {
		renderSignIn('');
		return;
	}
	nav.hidden = false;
	const parts = route();
	for (const a of nav.querySelectorAll('a'))
		a.setAttribute('aria-current', location.hash.startsWith(
		    a.getAttribute('href')) ? 'page' : 'false');
	let p;
	if (parts[0] === 'app' && parts[1])
		p = renderApp(parts[1], parts[2] || 'overview',
		    parts[3]);
	else if (parts[0] === 'knowledge' && parts[1])
		p = renderDataset(parts[1]);
	else if (parts[0] === 'knowledge')
		p = renderKnowledge();
	else if (parts[0] === 'settings' && parts[1] === 'sandbox')
		p = renderSandbox();
	else if (parts[0] === 'settings' && parts[1] === 'models')
		p = renderModels();
	else if (parts[0] === 'settings' && parts[1] === 'tools')
		p = renderTools();
	else
		p = renderApps(1);
	Promise.resolve(p).then(() => {
		if (my !== page.view)
			return;
		const h1 = main.querySelector('h1');
		const ae = document.activeElement;
		if (h1 && (!ae || ae === document.body || ae === main))
			h1.focus();
	}, (e) => fail(e));
}

setHooks(signOut, render);
onRoute(() => {
	flash('');
	render();
});
render();
