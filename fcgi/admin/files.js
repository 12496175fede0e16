/*
 * files.js — an app's files (assets): the tree, upload, folders, delete.
 */
import { el, add, clear } from '../ui/dom.js';
import { fmtSize, save } from '../ui/components.js';
import { page, flash, ask, api, fail, enc } from './page.js';

/* --- files --- */

export async function appFiles(app, pane, me) {
	const base = 'apps/' + enc(app.id) + '/assets/';
	const treeBox = el('div', { id: 'file-tree' });
	const folderSel = el('select', { id: 'upload-folder' });
	const mkSel = el('select', { id: 'mkdir-parent' });
	const file = el('input', { type: 'file', id: 'upload-file',
	    multiple: true });
	const dirName = el('input', { type: 'text', id: 'mkdir-name',
	    required: true, autocomplete: 'off' });
	const reload = async () => {
		const tree = await api('GET', base + 'tree');
		if (me !== page.view)
			return;
		const folders = [['', '/ (top)']];
		clear(treeBox).append(tree.children.length ?
		    fileList(tree.children, true, folders) :
		    el('p', { class: 'muted', text: 'No files yet.' }));
		for (const sel of [folderSel, mkSel]) {
			const keep = sel.value;
			add(clear(sel), folders.map(([v, t]) =>
			    el('option', { value: v, text: t })));
			sel.value = keep;
			if (sel.selectedIndex < 0)
				sel.selectedIndex = 0;
		}
	};
	const act = (fn) => async () => {
		try {
			await fn();
			await reload();
		} catch (e) { fail(e); }
	};
	function fileList(nodes, root, folders) {
		return el('ul', { class: 'tree' + (root ? ' root' : '') },
		    nodes.map((n) => {
			const isDir = n.node_type === 'folder';
			if (isDir)
				folders.push([n.id, n.path || n.name]);
			const btn = (t, fn, cls) => el('button', {
			    type: 'button', class: cls, text: t,
			    'aria-label': t + ' ' + n.name,
			    on: { click: act(fn) } });
			return el('li', { 'data-id': n.id },
			    el('div', { class: 'node' },
				el('span', { class: 'muted small',
				    text: isDir ? 'folder' : 'file' }),
				el('span', { class: 'name',
				    text: n.name }),
				isDir ? null : el('span', {
				    class: 'muted small',
				    text: fmtSize(n.size) }),
				isDir ? null : btn('Download', async () => {
					const r = await api('GET', base +
					    'files/' + enc(n.id) +
					    '/download', { raw: true });
					save(await r.blob(), n.name);
				}),
				btn('Rename', async () => {
					const v = await ask({ title:
					    'Rename ' + n.name, input:
					    n.name, label: 'New name',
					    ok: 'Rename' });
					if (v && v !== n.name)
						await api('POST', base +
						    'nodes/' + enc(n.id) +
						    '/rename', { json:
						    { name: v } });
				}),
				btn('Delete', async () => {
					if (await ask({ title: 'Delete ' +
					    n.name + '?', text: isDir ?
					    'The folder and everything ' +
					    'in it are deleted.' : null,
					    ok: 'Delete', danger: true }))
						await api('DELETE', base +
						    'nodes/' + enc(n.id));
				}, 'danger')),
			    n.skill ? el('div', { class: 'skill' },
				'Skill ', el('strong', {
				    text: n.skill.name || n.name }),
				n.skill.description ? ': ' +
				n.skill.description : '') : null,
			    isDir && n.children && n.children.length ?
				fileList(n.children, false, folders) :
				null);
		    }));
	}
	const upload = el('form', { class: 'card', id: 'upload-form',
	    on: { submit: async (ev) => {
		ev.preventDefault();
		if (!file.files.length) {
			flash('Choose a file to upload.', 'error');
			return;
		}
		try {
			for (const f of file.files) {
				const fd = new FormData();
				fd.append('file', f, f.name);
				if (folderSel.value)
					fd.append('parent_id',
					    folderSel.value);
				await api('POST', base + 'files' +
				    (replace.checked ? '?replace=1' : ''),
				    { body: fd });
			}
			flash('Uploaded ' + file.files.length +
			    ' file(s).', 'ok');
			file.value = '';
			await reload();
		} catch (e) { fail(e); }
	} } });
	const replace = el('input', { type: 'checkbox',
	    id: 'upload-replace' });
	add(upload, [el('h2', { text: 'Upload' }),
	    el('label', { for: 'upload-file', text: 'Files' }), file,
	    el('label', { for: 'upload-folder', text: 'Into folder' }),
	    folderSel,
	    el('label', { class: 'inline' }, replace,
		'Replace a file of the same name'),
	    el('div', { class: 'row end' }, el('button', {
		type: 'submit', class: 'primary', text: 'Upload' }))]);
	const mkdir = el('form', { class: 'card', id: 'mkdir-form',
	    on: { submit: async (ev) => {
		ev.preventDefault();
		try {
			await api('POST', base + 'folders', { json: {
			    name: dirName.value,
			    parent_id: mkSel.value || null } });
			dirName.value = '';
			await reload();
		} catch (e) { fail(e); }
	} } },
	    el('h2', { text: 'New folder' }),
	    el('label', { for: 'mkdir-name', text: 'Name' }), dirName,
	    el('label', { for: 'mkdir-parent', text: 'In folder' }),
	    mkSel,
	    el('div', { class: 'row end' }, el('button', {
		type: 'submit', text: 'Create folder' })));
	pane.append(el('h2', { text: 'Files' }), treeBox,
	    el('div', { class: 'row' }, el('div', { class: 'grow' },
		upload), el('div', { class: 'grow' }, mkdir)));
	await reload();
}
