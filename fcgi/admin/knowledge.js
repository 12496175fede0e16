/*
 * knowledge.js — the Knowledge section: datasets (list, create, delete),
 * a dataset's documents (upload with progress, each one's indexing status
 * polled until it settles, its chunks) and hit testing with scores, all
 * through the console's /console/api/datasets routes.
 */
import { el, add, clear } from '../ui/dom.js';
import { fmtSize } from '../ui/components.js';
import { API, main, page, flash, ask, api, fail, enc, token } from
    './page.js';

const SETTLED = ['completed', 'error', 'paused'];

/* ====== The list ====== */

export async function renderKnowledge() {
	const me = page.view;
	const list = el('div', { id: 'kb-list' });
	const name = el('input', { type: 'text', id: 'kb-name',
	    required: true, autocomplete: 'off' });
	const desc = el('input', { type: 'text', id: 'kb-desc',
	    autocomplete: 'off' });
	const reload = async () => {
		const r = await api('GET', 'datasets?page=1&limit=100');
		if (me !== page.view)
			return;
		clear(list).append(r.data.length ? el('table', {
		    class: 'list' }, el('thead', {}, el('tr', {},
			el('th', { text: 'Name' }), el('th', {
			    text: 'Documents' }), el('th', {
			    text: 'Index' }))),
		    el('tbody', {}, r.data.map((d) => el('tr', {
			'data-id': d.id },
			el('td', {}, el('a', { href: '#/knowledge/' +
			    enc(d.id), text: d.name })),
			el('td', { text: String(d.document_count || 0) }),
			el('td', { text: d.indexing_technique ||
			    '' }))))) :
		    el('p', { class: 'muted', text: 'No knowledge bases ' +
			'yet.' }));
	};
	const form = el('form', { class: 'card', id: 'kb-create',
	    on: { submit: async (ev) => {
		ev.preventDefault();
		try {
			const d = await api('POST', 'datasets', { json: {
			    name: name.value.trim(),
			    description: desc.value.trim(),
			    indexing_technique: 'economy' } });
			location.hash = '#/knowledge/' + enc(d.id);
		} catch (e) { fail(e); }
	} } },
	    el('h2', { text: 'New knowledge base' }),
	    el('label', { for: 'kb-name', text: 'Name' }), name,
	    el('label', { for: 'kb-desc', text: 'Description' }), desc,
	    el('div', { class: 'row end' }, el('button', {
		type: 'submit', class: 'primary', text: 'Create' })));
	clear(main).append(el('h1', { tabindex: '-1', text: 'Knowledge' }),
	    list, form);
	await reload();
}

/* ====== One dataset ====== */

/*
 * Sends one file to create-by-file with XMLHttpRequest, whose upload
 * events give the progress fetch does not; onProgress(fraction).
 */
function upload(dsId, file, onProgress) {
	return new Promise((resolve, reject) => {
		const x = new XMLHttpRequest();
		x.open('POST', new URL('datasets/' + enc(dsId) +
		    '/document/create-by-file', API));
		x.setRequestHeader('Authorization', 'Bearer ' + token());
		x.upload.onprogress = (e) => {
			if (e.lengthComputable)
				onProgress(e.loaded / e.total);
		};
		x.onload = () => {
			let j = null;
			try {
				j = JSON.parse(x.responseText);
			} catch (e) { /* not JSON */ }
			if (x.status >= 200 && x.status < 300)
				resolve(j);
			else
				reject(new Error((j && j.message) ||
				    'HTTP ' + x.status));
		};
		x.onerror = () => reject(new Error('the server cannot be ' +
		    'reached'));
		const fd = new FormData();
		fd.append('file', file, file.name);
		x.send(fd);
	});
}

export async function renderDataset(id) {
	const me = page.view;
	const base = 'datasets/' + enc(id);
	const ds = await api('GET', base);
	if (me !== page.view)
		return;
	const docs = el('div', { id: 'kb-docs' });
	const chunks = el('div', { id: 'kb-chunks' });
	const hits = el('div', { id: 'kb-hits' });
	const bars = el('div', { id: 'kb-progress' });
	const file = el('input', { type: 'file', id: 'kb-file',
	    multiple: true });
	const query = el('input', { type: 'text', id: 'kb-query',
	    required: true, autocomplete: 'off' });
	let timer = 0;

	const showChunks = async (doc) => {
		const r = await api('GET', base + '/documents/' +
		    enc(doc.id) + '/segments?page=1&limit=100');
		if (me !== page.view)
			return;
		clear(chunks).append(el('h2', { text: 'Chunks of ' +
		    doc.name }), r.data.length ? el('ol', {
		    class: 'chunks' }, r.data.map((s) => el('li', {
			class: 'chunk', 'data-id': s.id },
			el('div', { class: 'muted small', text: '#' +
			    s.position + ' · ' + s.word_count + ' words' }),
			el('div', { text: s.content })))) :
		    el('p', { class: 'muted', text: 'No chunks.' }));
	};
	const reload = async () => {
		clearTimeout(timer);
		const r = await api('GET', base +
		    '/documents?page=1&limit=100');
		if (me !== page.view)
			return;
		clear(docs).append(r.data.length ? el('table', {
		    class: 'list' }, el('thead', {}, el('tr', {},
			el('th', { text: 'Document' }), el('th', {
			    text: 'Status' }), el('th', { text: 'Words' }),
			el('th', {}))),
		    el('tbody', {}, r.data.map((d) => el('tr', {
			'data-id': d.id },
			el('td', { text: d.name }),
			el('td', { class: 'status', 'data-status':
			    d.indexing_status, text: d.indexing_status +
			    (d.error ? ': ' + d.error : '') }),
			el('td', { text: String(d.word_count || 0) }),
			el('td', {}, el('button', { type: 'button',
			    text: 'Chunks', 'aria-label': 'Chunks of ' +
			    d.name, disabled: d.indexing_status !==
			    'completed', on: { click: () => showChunks(d)
			    .catch((e) => fail(e)) } })))))) :
		    el('p', { class: 'muted', text: 'No documents yet.' }));
		/* poll until every document's indexing settles */
		if (r.data.some((d) => !SETTLED.includes(d.indexing_status)))
			timer = setTimeout(() => reload().catch((e) =>
			    fail(e)), 500);
	};
	const upForm = el('form', { class: 'card', id: 'kb-upload',
	    on: { submit: async (ev) => {
		ev.preventDefault();
		if (!file.files.length) {
			flash('Choose a file to upload.', 'error');
			return;
		}
		try {
			for (const f of file.files) {
				const bar = el('progress', { max: '1',
				    value: '0', 'aria-label': 'Uploading ' +
				    f.name });
				const row = el('div', { class: 'row' },
				    el('span', { text: f.name + ' (' +
					fmtSize(f.size) + ')' }), bar);
				bars.append(row);
				await upload(id, f, (p) => { bar.value = p; });
				bar.value = 1;
				row.classList.add('done');
			}
			flash('Uploaded ' + file.files.length +
			    ' file(s); indexing.', 'ok');
			file.value = '';
			await reload();
		} catch (e) { fail(e); }
	} } },
	    el('h2', { text: 'Upload' }),
	    el('label', { for: 'kb-file', text: 'Files' }), file, bars,
	    el('div', { class: 'row end' }, el('button', {
		type: 'submit', class: 'primary', text: 'Upload' })));
	const hitForm = el('form', { class: 'card', id: 'kb-hit',
	    on: { submit: async (ev) => {
		ev.preventDefault();
		try {
			const r = await api('POST', base + '/hit-testing',
			    { json: { query: query.value } });
			if (me !== page.view)
				return;
			clear(hits).append(r.records.length ? el('ol', {
			    class: 'chunks' }, r.records.map((h) =>
				el('li', { class: 'hit' },
				    el('div', { class: 'muted small' },
					'score ', el('strong', {
					    class: 'score', text:
					    Number(h.score).toFixed(4) }),
					' · ' + ((h.segment.document || {})
					    .name || '')),
				    el('div', { text: h.segment.content })))) :
			    el('p', { class: 'muted', text: 'Nothing ' +
				'found.' }));
		} catch (e) { fail(e); }
	} } },
	    el('h2', { text: 'Hit testing' }),
	    el('label', { for: 'kb-query', text: 'Query' }), query,
	    el('div', { class: 'row end' }, el('button', {
		type: 'submit', class: 'primary', text: 'Test' })), hits);
	const del = el('button', { type: 'button', class: 'danger',
	    text: 'Delete knowledge base', on: { click: async () => {
		if (!await ask({ title: 'Delete ' + ds.name + '?', text:
		    'Its documents and chunks are deleted.', ok: 'Delete',
		    danger: true }))
			return;
		try {
			await api('DELETE', base);
			location.hash = '#/knowledge';
		} catch (e) { fail(e); }
	} } });
	add(clear(main), [el('p', {}, el('a', { href: '#/knowledge',
	    text: '← Knowledge' })),
	    el('h1', { tabindex: '-1', text: ds.name }),
	    ds.description ? el('p', { class: 'muted',
		text: ds.description }) : null,
	    el('h2', { text: 'Documents' }), docs,
	    el('div', { class: 'row' }, el('div', { class: 'grow' },
		upForm), el('div', { class: 'grow' }, hitForm)),
	    chunks, el('div', { class: 'row end' }, del)]);
	await reload();
}
