/*
 * api.js — a JSON API client: a bearer token, JSON bodies, errors as
 * ApiError with the server's {code, message}, server-sent event streams.
 * The caller says where the API is and what a 401 does, so the admin page
 * (console API, admin token) and the Web App (web API, passport) can both
 * use it. Imports nothing.
 */

export class ApiError extends Error {
	constructor(status, body, fallback) {
		super((body && (body.message || body.error)) ||
		    fallback || ('HTTP ' + status));
		this.status = status;
		this.body = body || {};
		this.code = this.body.code || '';
	}
}

/*
 * client({base: URL, headers: () => {...}, onUnauthorized: () => {}}):
 * returns api(method, path, o) -> parsed JSON (null for 204), path
 * relative to base. o.json: a body sent as JSON; o.body + o.type: a raw
 * body; o.raw: resolve to the Response itself; o.signal: an AbortSignal
 * for the fetch (a stream the page gives up on). Throws ApiError; a 401
 * calls onUnauthorized first and throws one with .auth set.
 */
export function client(c) {
	return async function api(method, path, o) {
		o = o || {};
		const headers = Object.assign({}, c.headers ? c.headers() : {});
		let body = o.body;
		if (o.json !== undefined) {
			headers['Content-Type'] = 'application/json';
			body = JSON.stringify(o.json);
		} else if (o.type)
			headers['Content-Type'] = o.type;
		let res;
		try {
			res = await fetch(new URL(path, c.base), {
			    method, headers, body, cache: 'no-store',
			    signal: o.signal });
		} catch (e) {
			if (e.name === 'AbortError')
				throw e;
			throw new ApiError(0, null, 'the server cannot be ' +
			    'reached (' + e.message + ')');
		}
		if (res.status === 401 && c.onUnauthorized) {
			c.onUnauthorized();
			const err = new ApiError(401, null, 'unauthorized');
			err.auth = true;
			throw err;
		}
		if (!res.ok) {
			let j = null;
			try {
				j = await res.json();
			} catch (e) { /* not JSON */ }
			throw new ApiError(res.status, j, res.statusText);
		}
		if (o.raw)
			return res;
		if (res.status === 204)
			return null;
		const ct = res.headers.get('Content-Type') || '';
		return ct.includes('json') ? res.json() : res.text();
	};
}

/*
 * Reads a server-sent event stream (a fetch Response) to its end, calling
 * onEvent with the data of each event parsed as JSON ({event:
 * 'unreadable', data: {text}} when it is not JSON; comments and pings are
 * skipped). Resolves when the stream ends.
 */
export async function readEvents(res, onEvent) {
	const reader = res.body.getReader();
	const dec = new TextDecoder();
	let buf = '';
	for (;;) {
		const { done, value } = await reader.read();
		if (done)
			break;
		buf += dec.decode(value, { stream: true });
		let i;
		while ((i = buf.indexOf('\n\n')) >= 0) {
			const block = buf.slice(0, i);
			buf = buf.slice(i + 2);
			const data = block.split('\n').filter((l) =>
			    l.startsWith('data:')).map((l) =>
			    l.slice(5).trimStart()).join('\n');
			if (!data)
				continue;	/* ping */
			let e;
			try {
				e = JSON.parse(data);
			} catch (err) {
				e = { event: 'unreadable', data: { text: data } };
			}
			onEvent(e);
		}
	}
}
