/*
 * router.js — views chosen by the URL fragment: "#/app/<id>/run" is
 * ['app', '<id>', 'run'], each segment URL-decoded. Imports nothing.
 */

/* The segments of hash (default location.hash), decoded. */
export function route(hash) {
	const h = (hash === undefined ? location.hash : hash)
	    .replace(/^#\/?/, '');
	return h.split('/').map((s) => {
		try {
			return decodeURIComponent(s);
		} catch (e) {
			return s;
		}
	});
}

/* The fragment for segments: href('app', id) is "#/app/<id>". */
export function href(...parts) {
	return '#/' + parts.map((p) => encodeURIComponent(p)).join('/');
}

/* Calls fn(route()) on every change of the fragment. */
export function onRoute(fn) {
	window.addEventListener('hashchange', () => fn(route()));
}
