/*
 * editor.js — the graph editor's state, without a DOM: the draft being
 * edited, the operations on it (add, move, delete a node; connect and
 * disconnect an edge; change a node's data), undo and redo as snapshots of
 * the draft, what a node can read (the outputs of the nodes upstream of
 * it, with their types, and the system and environment variables), and an
 * autosave of the draft with its hash. Imports nothing: the view draws it,
 * the panels edit it, the page saves it.
 */

/* A node's outputs by type, as Dify's variable picker lists them. */
const OUTPUTS = {
	llm: [['text', 'string'], ['reasoning_content', 'string'],
	    ['usage', 'object']],
	code: null,	/* its declared outputs */
	'template-transform': [['output', 'string']],
	'variable-aggregator': null,	/* output, of its output_type */
	'if-else': [],
	answer: [['answer', 'string']],
	end: [],
	'http-request': [['body', 'string'], ['status_code', 'number'],
	    ['headers', 'object']],
	'knowledge-retrieval': [['result', 'array[object]']],
	'question-classifier': [['class_name', 'string']],
	tool: [['text', 'string'], ['json', 'array[object]']],
};

const SYSTEM = [['sys', 'user_id', 'string'], ['sys', 'app_id', 'string'],
    ['sys', 'workflow_id', 'string'], ['sys', 'workflow_run_id', 'string'],
    ['sys', 'files', 'array[file]']];

/* A fresh id in Dify's style (milliseconds since the epoch, unique here). */
let lastId = 0;
export function newId() {
	lastId = Math.max(Date.now(), lastId + 1);
	return String(lastId);
}

/* The data of a new node of type t, as Dify's editor creates it. */
export function defaults(t) {
	const base = { type: t, title: '', desc: '', selected: false };
	switch (t) {
	case 'start':
		return Object.assign(base, { title: 'Start', variables: [] });
	case 'llm':
		return Object.assign(base, { title: 'LLM',
		    model: { provider: '', name: '', mode: 'chat',
			completion_params: { temperature: 0.7 } },
		    prompt_template: [{ id: newId(), role: 'system',
			text: '' }, { id: newId(), role: 'user', text: '' }],
		    context: { enabled: false, variable_selector: [] },
		    vision: { enabled: false } });
	case 'if-else':
		return Object.assign(base, { title: 'IF/ELSE',
		    cases: [{ case_id: 'true', logical_operator: 'and',
			conditions: [] }] });
	case 'code':
		return Object.assign(base, { title: 'Code',
		    code_language: 'python3', variables: [],
		    code: 'def main() -> dict:\n    return {"result": ""}\n',
		    outputs: { result: { type: 'string', children: null } } });
	case 'template-transform':
		return Object.assign(base, { title: 'Template',
		    variables: [], template: '' });
	case 'variable-aggregator':
		return Object.assign(base, { title: 'Variable Aggregator',
		    output_type: 'string', variables: [] });
	case 'answer':
		return Object.assign(base, { title: 'Answer', answer: '',
		    variables: [] });
	case 'end':
		return Object.assign(base, { title: 'End', outputs: [] });
	default:
		return Object.assign(base, { title: t });
	}
}

/* The source handles of node n, in Dify's order: an if-else's cases then
 * ELSE ('false'), a classifier's classes; an end none; anything else one
 * 'source'. */
export function sourceHandles(n) {
	const d = n.data || {};
	if (d.type === 'if-else')
		return (d.cases || []).map((c) => c.case_id).concat('false');
	if (d.type === 'question-classifier')
		return (d.classes || []).map((c) => c.id);
	return d.type === 'end' ? [] : ['source'];
}

/*
 * createEditor(draft, onChange): the editing state over a copy of draft
 * ({graph: {nodes, edges}, environment_variables, ..., hash}).
 * onChange(why) is called after every change (and after undo/redo).
 */
export function createEditor(draft, onChange) {
	const doc = JSON.parse(JSON.stringify(draft));
	doc.graph = doc.graph || {};
	doc.graph.nodes = doc.graph.nodes || [];
	doc.graph.edges = doc.graph.edges || [];
	const past = [], future = [];
	const snap = () => JSON.stringify({ graph: doc.graph,
	    env: doc.environment_variables || [] });
	const restore = (s) => {
		const o = JSON.parse(s);
		doc.graph = o.graph;
		doc.environment_variables = o.env;
	};
	const nodes = () => doc.graph.nodes;
	const edges = () => doc.graph.edges;
	const node = (id) => nodes().find((n) => n.id === id) || null;

	/* every change goes through here: one undo step */
	function change(why, fn) {
		const before = snap();
		const r = fn();
		if (snap() === before)
			return r;
		past.push(before);
		if (past.length > 200)
			past.shift();
		future.length = 0;
		onChange(why);
		return r;
	}

	const ed = {
		doc, node, nodes, edges,
		get canUndo() { return past.length > 0; },
		get canRedo() { return future.length > 0; },
		undo() {
			if (!past.length)
				return;
			future.push(snap());
			restore(past.pop());
			onChange('undo');
		},
		redo() {
			if (!future.length)
				return;
			past.push(snap());
			restore(future.pop());
			onChange('redo');
		},

		/* Adds a node of type t at pos; returns its id. */
		addNode(t, pos) {
			return change('add', () => {
				const id = newId();
				const data = defaults(t);
				const same = nodes().filter((n) => n.data &&
				    n.data.type === t).length;
				if (same && t !== 'start')
					data.title += ' ' + (same + 1);
				nodes().push({ id, type: 'custom', data,
				    position: { x: pos.x, y: pos.y },
				    positionAbsolute: { x: pos.x, y: pos.y },
				    width: 244, height: 90,
				    sourcePosition: 'right',
				    targetPosition: 'left', selected: false });
				return id;
			});
		},
		/* Adds a copy of node data d at pos (a second start is
		 * refused: null); returns its id. */
		paste(d, pos) {
			if (d.type === 'start' && nodes().some((n) => n.data &&
			    n.data.type === 'start'))
				return null;
			return change('paste', () => {
				const id = newId();
				const data = JSON.parse(JSON.stringify(d));
				data.selected = false;
				nodes().push({ id, type: 'custom', data,
				    position: { x: pos.x, y: pos.y },
				    positionAbsolute: { x: pos.x, y: pos.y },
				    width: 244, height: 90,
				    sourcePosition: 'right',
				    targetPosition: 'left', selected: false });
				return id;
			});
		},
		/* Removes node id and its edges. */
		removeNode(id) {
			change('delete', () => {
				doc.graph.nodes = nodes().filter((n) =>
				    n.id !== id);
				doc.graph.edges = edges().filter((e) =>
				    e.source !== id && e.target !== id);
			});
		},
		move(id, pos) {
			change('move', () => {
				const n = node(id);
				if (!n)
					return;
				n.position = { x: Math.round(pos.x),
				    y: Math.round(pos.y) };
				n.positionAbsolute = Object.assign({},
				    n.position);
			});
		},
		/*
		 * Connects handle sh of source to target; returns the edge's id,
		 * or null when it may not be (itself, an edge already there, a
		 * start as the target, a cycle back upstream).
		 */
		connect(source, sh, target) {
			const s = node(source), t = node(target);
			if (!s || !t || source === target ||
			    (t.data && t.data.type === 'start') ||
			    !sourceHandles(s).includes(sh) ||
			    edges().some((e) => e.source === source &&
			    (e.sourceHandle || 'source') === sh &&
			    e.target === target) ||
			    ed.upstream(source).includes(target))
				return null;
			return change('connect', () => {
				const id = source + '-' + sh + '-' + target +
				    '-target';
				edges().push({ id, type: 'custom', source,
				    sourceHandle: sh, target,
				    targetHandle: 'target', zIndex: 0,
				    data: { sourceType: s.data.type,
					targetType: t.data.type,
					isInIteration: false,
					isInLoop: false } });
				return id;
			});
		},
		disconnect(edgeId) {
			change('disconnect', () => {
				doc.graph.edges = edges().filter((e) =>
				    e.id !== edgeId);
			});
		},
		/* Replaces node id's data with fn(copy of data)'s result. */
		setData(id, fn) {
			change('edit', () => {
				const n = node(id);
				if (!n)
					return;
				const d = JSON.parse(JSON.stringify(n.data ||
				    {}));
				n.data = fn(d) || d;
				/* a case removed from an if-else takes its
				 * edges along */
				const hs = sourceHandles(n);
				doc.graph.edges = edges().filter((e) =>
				    e.source !== id ||
				    hs.includes(e.sourceHandle || 'source'));
			});
		},

		/* The ids of every node upstream of id (not id itself). */
		upstream(id) {
			const seen = new Set();
			const todo = [id];
			while (todo.length) {
				const cur = todo.pop();
				for (const e of edges())
					if (e.target === cur && !seen.has(e.source)) {
						seen.add(e.source);
						todo.push(e.source);
					}
			}
			seen.delete(id);
			return [...seen];
		},
		/* What node id can read: [{selector, label, type}] of the
		 * upstream nodes' outputs, then system and environment. */
		variables(id) {
			const out = [];
			for (const uid of ed.upstream(id)) {
				const n = node(uid);
				const d = (n && n.data) || {};
				let list = OUTPUTS[d.type];
				if (d.type === 'start')
					list = (d.variables || []).map((v) =>
					    [v.variable, v.type === 'number' ?
					    'number' : /file/.test(v.type) ?
					    'file' : 'string']);
				else if (d.type === 'code')
					list = Object.entries(d.outputs || {})
					    .map(([k, v]) => [k, v.type]);
				else if (d.type === 'variable-aggregator')
					list = [['output', d.output_type ||
					    'string']];
				for (const [v, type] of list || [])
					out.push({ selector: [uid, v],
					    label: (d.title || uid) + '.' + v,
					    type });
			}
			for (const [a, b, type] of SYSTEM)
				out.push({ selector: [a, b], label: a + '.' + b,
				    type });
			for (const v of doc.environment_variables || [])
				out.push({ selector: ['env', v.name],
				    label: 'env.' + v.name,
				    type: v.value_type === 'number' ?
				    'number' : 'string' });
			return out;
		},
	};
	return ed;
}

/*
 * autosaver(ed, save, onState): saves ed.doc through save(body) -> {hash}
 * once a change has settled (a short debounce), one save at a time, the
 * newest state last. onState(s, err): 'pending' (a change not saved yet),
 * 'saving', 'saved', 'stale' (another
 * tab saved since: 409 draft_workflow_not_sync; nothing is saved until the
 * page is reloaded), 'error'. Returns {touch(), flush() -> promise}.
 */
export function autosaver(ed, save, onState) {
	let timer = null, running = null, again = false, stale = false;
	const body = () => ({ graph: ed.doc.graph,
	    features: ed.doc.features || {},
	    environment_variables: ed.doc.environment_variables || [],
	    conversation_variables: ed.doc.conversation_variables || [],
	    hash: ed.doc.hash });
	async function run() {
		if (stale)
			return;
		if (running) {
			again = true;
			return running;
		}
		running = (async () => {
			do {
				again = false;
				onState('saving');
				try {
					const r = await save(body());
					ed.doc.hash = r.hash;
					onState('saved', null, r);
				} catch (e) {
					if (e && e.code ===
					    'draft_workflow_not_sync') {
						stale = true;
						onState('stale', e);
						return;
					}
					onState('error', e);
					return;
				}
			} while (again);
		})();
		try {
			await running;
		} finally {
			running = null;
		}
	}
	return {
		touch() {
			if (!stale)
				onState('pending');
			clearTimeout(timer);
			timer = setTimeout(run, 400);
		},
		flush() {
			clearTimeout(timer);
			return run();
		},
		get stale() { return stale; },
	};
}
