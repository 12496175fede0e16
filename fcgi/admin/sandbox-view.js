/*
 * sandbox-view.js — what a sandboxed run did: its commands, the workspace
 * and its files.
 */
import { el, add, clear } from '../ui/dom.js';
import { fmtSize, badge, save } from '../ui/components.js';
import { api, fail, enc } from './page.js';

/* --- what a sandboxed run did: commands, workspace, files --- */

const OUT_LONG = 12;	/* lines: a longer output starts collapsed */

/* An output as a <details>, open unless it is long. */
function outputBlock(text, cls) {
	const t = text === undefined || text === null ? '' :
	    String(text);
	const lines = t.replace(/\n$/, '').split('\n').length;
	const long = lines > OUT_LONG || t.length > 2000;
	return el('details', { class: cls, open: !long },
	    el('summary', { text: long ? 'Output (' + lines +
		' lines)' : 'Output' }), el('pre', { text: t }));
}

function isImage(f) {
	return f.type === 'image' || /^image\//.test(f.mime_type || '') ||
	    /\.(png|jpe?g|gif|webp|svg)$/i.test(f.filename || '');
}

/* An output file: a download, an image with its preview. */
function fileItem(f) {
	const name = f.filename || 'file';
	return el('li', { class: 'outfile' },
	    el('div', { class: 'row' },
		el('a', { class: 'button', href: f.url, download: name,
		    text: 'Download ' + name }),
		el('span', { class: 'muted small', text: [f.mime_type,
		    fmtSize(f.size)].filter(Boolean).join(', ') })),
	    isImage(f) ? el('img', { class: 'preview', src: f.url,
		alt: name }) : null);
}

/* Without exit_code: the "[exit code N]" line an output ends with
 * when the command did not exit 0 (older runs), else null. */
function exitOf(code, output) {
	if (typeof code === 'number')
		return code;
	const tail = /\n\[exit code (\d+)\]$/.exec(output || '');
	return tail ? Number(tail[1]) : null;
}

/* One command of the Agent: "$ cmd", its exit code, its output. */
function commandItem(input, output, code, status) {
	const failed = status === 'error' || (code !== null &&
	    code !== 0);
	return el('li', { class: 'cmd' },
	    el('div', { class: 'row' },
		el('code', { class: 'command', text: '$ ' +
		    (input || '') }),
		badge(code !== null ? 'exit ' + code : status ||
		    'done', failed ? 'failed' : 'succeeded')),
	    outputBlock(output, 'output'));
}

/*
 * The commands and output files a finished node of a sandboxed run
 * kept in its outputs (generation.tool_calls, files), for the
 * trace; null when it has none.
 */
export function nodeSandbox(n) {
	const out = n.outputs || {};
	const calls = ((out.generation || {}).tool_calls || [])
	    .filter((c) => c && c.name === 'bash');
	const files = (Array.isArray(out.files) ? out.files : [])
	    .filter((f) => f && f.url);
	if (!calls.length && !files.length)
		return null;
	const cmd = (c) => {
		let a = c.arguments;
		try {
			a = typeof a === 'string' ? JSON.parse(a) : a;
		} catch (e) { /* as it is */ }
		return a && typeof a === 'object' ? a.bash ||
		    a.command || JSON.stringify(a) : String(a || '');
	};
	return [calls.length ? [el('h3', { text: 'Commands' }),
	    el('ol', { class: 'cmds' }, calls.map((c) =>
		commandItem(cmd(c), c.output, exitOf(c.exit_code,
		c.output), c.status)))] : null,
	    files.length ? [el('h3', { text: 'Output files' }),
		el('ul', { class: 'outfiles' }, files.map(fileItem))] :
	    null];
}

/*
 * Follows a run's events into box: each bash command of the Agent
 * (agent_log "start", then its "success" / "error" entry, paired in
 * order; an older run's finishing entry has no tool_input or
 * exit_code), the files its nodes put out, and on workspace() the
 * draft workspace's tree.
 */
export function sandboxView(app, box) {
	const cmdList = el('ol', { class: 'cmds', id: 'run-commands' });
	const fileList = el('ul', { class: 'outfiles',
	    id: 'run-files' });
	const cmdHead = el('h2', { text: 'Commands', hidden: true });
	const fileHead = el('h2', { text: 'Output files',
	    hidden: true });
	const tree = el('div', { id: 'run-workspace' });
	const pending = [];
	const seen = new Set();
	box.append(cmdHead, cmdList, fileHead, fileList, tree);

	function bashEntry(d) {
		const data = d.data || {};
		return d.label === 'bash' || data.tool_name === 'bash';
	}

	function started(data) {
		const item = el('li', { class: 'cmd' },
		    el('div', { class: 'row' },
			el('code', { class: 'command',
			    text: '$ ' + (data.tool_input || '') }),
			badge('running')));
		pending.push({ input: data.tool_input, item });
		cmdHead.hidden = false;
		cmdList.append(item);
	}

	function finished(d) {
		const data = d.data || {};
		let i = pending.findIndex((p) => data.tool_input !==
		    undefined && p.input === data.tool_input);
		if (i < 0)
			i = 0;
		let p = pending.splice(i, 1)[0];
		if (!p) {
			started(data);
			p = pending.pop();
		}
		p.item.replaceWith(commandItem(p.input !== undefined ?
		    p.input : data.tool_input, data.output,
		    exitOf(data.exit_code, data.output), d.status));
	}

	function addFiles(list) {
		for (const f of Array.isArray(list) ? list : []) {
			if (!f || typeof f !== 'object' || !f.url ||
			    seen.has(f.url))
				continue;
			seen.add(f.url);
			fileHead.hidden = false;
			fileList.append(fileItem(f));
		}
	}

	function filesIn(v) {
		if (!v || typeof v !== 'object')
			return;
		for (const x of Object.values(v))
			if (Array.isArray(x))
				addFiles(x);
			else if (x && typeof x === 'object' &&
			    x.url && (x.filename || x.type))
				addFiles([x]);
	}

	function event(e) {
		const d = e.data || {};
		if (e.event === 'agent_log' && bashEntry(d)) {
			if (d.status === 'start')
				started(d.data || {});
			else if (d.status === 'success' ||
			    d.status === 'error')
				finished(d);
		} else if (e.event === 'node_finished' ||
		    e.event === 'workflow_finished')
			filesIn(d.outputs);
	}

	/* The draft workspace as the run left it, as a tree. */
	async function workspace() {
		const base = 'apps/' + enc(app.id) + '/sandbox/files';
		let list;
		try {
			list = await api('GET', base + '?recursive=true');
		} catch (e) {
			if (e.status !== 404)
				throw e;
			list = [];
		}
		const root = { kids: new Map() };
		for (const n of list) {
			let at = root;
			const parts = n.path.split('/');
			parts.forEach((part, i) => {
				if (!at.kids.has(part))
					at.kids.set(part, { name: part,
					    kids: new Map() });
				at = at.kids.get(part);
				if (i === parts.length - 1)
					at.node = n;
			});
		}
		const render = (t, cls) => el('ul', { class: cls },
		    [...t.kids.values()].map((k) => {
			const n = k.node || { is_dir: true,
			    path: k.name };
			return el('li', { 'data-path': n.path },
			    el('div', { class: 'node' },
				el('span', { class: 'muted small',
				    text: n.is_dir ? 'folder' :
				    'file' }),
				el('span', { class: 'name',
				    text: k.name }),
				n.is_dir ? null : el('span', {
				    class: 'muted small',
				    text: fmtSize(n.size) }),
				n.is_dir ? null : el('button', {
				    type: 'button', text: 'Download',
				    'aria-label': 'Download ' + n.path,
				    on: { click: async () => {
					try {
						const r = await api(
						    'GET', base +
						    '/download?path=' +
						    enc(n.path),
						    { raw: true });
						save(await r.blob(),
						    k.name);
					} catch (e) { fail(e); }
				    } } })),
			    k.kids.size ? render(k, 'tree') : null);
		    }));
		add(clear(tree), [el('h2', { text: 'Workspace' }),
		    list.length ? render(root, 'tree root') :
		    el('p', { class: 'muted', text: 'The ' +
			'workspace is empty.' })]);
	}

	return { event, workspace };
}

/* Posts the run and calls onEvent for each SSE event as it comes. */
