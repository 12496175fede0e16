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
	'question-classifier': [['class_name', 'string'], ['usage', 'object']],
	tool: [['text', 'string'], ['files', 'array[file]'],
	    ['json', 'array[object]']],
	agent: [['text', 'string'], ['usage', 'object'],
	    ['files', 'array[file]'], ['json', 'array[object]']],
	'parameter-extractor': null,	/* its parameters, then these: */
	'document-extractor': null,	/* text, or one per file */
	'list-operator': null,	/* result, first_record, last_record */
	iteration: null,	/* output, an array of what it collects */
	loop: null,	/* its loop variables */
	assigner: [],
	'iteration-start': [],
	'loop-start': [],
	'loop-end': [],
};

/* The nodes Dify lets handle an error (error_strategy: a default value
 * or the fail-branch handle); they then output error_message and
 * error_type. */
export const ERROR_NODES = ['llm', 'code', 'http-request', 'tool', 'agent'];

/* The outputs [[name, type]] of node data d (OUTPUTS, or from its own
 * fields). */
export function outputsOf(d) {
	let list = OUTPUTS[d.type] || [];
	const arr = (t) => /^array\[/.test(t || '') ? t : 'array[' +
	    (t || 'string') + ']';
	if (d.type === 'start')
		list = (d.variables || []).map((v) => [v.variable,
		    v.type === 'number' ? 'number' : /file/.test(v.type) ?
		    (v.type === 'file-list' ? 'array[file]' : 'file') :
		    'string']);
	else if (d.type === 'code')
		list = Object.entries(d.outputs || {}).map(([k, v]) =>
		    [k, v.type]);
	else if (d.type === 'variable-aggregator')
		list = [['output', d.output_type || 'string']];
	else if (d.type === 'parameter-extractor')
		list = (d.parameters || []).map((p) => [p.name, p.type ||
		    'string']).concat([['__is_success', 'number'],
		    ['__reason', 'string'], ['__usage', 'object']]);
	else if (d.type === 'document-extractor')
		list = [['text', d.is_array_file ? 'array[string]' :
		    'string']];
	else if (d.type === 'list-operator') {
		const t = d.var_type || 'array[string]';
		const it = d.item_var_type || t.replace(/^array\[(.*)\]$/,
		    '$1');
		list = [['result', t], ['first_record', it],
		    ['last_record', it]];
	} else if (d.type === 'iteration')
		list = [['output', d.output_type || arr('string')]];
	else if (d.type === 'loop')
		list = (d.loop_variables || []).map((v) => [v.label,
		    v.var_type || 'string']);
	if (ERROR_NODES.includes(d.type) && d.error_strategy)
		list = list.concat([['error_message', 'string'],
		    ['error_type', 'string']]);
	return list.filter(([k]) => k);
}

const SYSTEM = [['sys', 'user_id', 'string'], ['sys', 'app_id', 'string'],
    ['sys', 'workflow_id', 'string'], ['sys', 'workflow_run_id', 'string'],
    ['sys', 'files', 'array[file]']];

/* and a chatflow's */
const CHAT = [['sys', 'query', 'string'], ['sys', 'conversation_id', 'string'],
    ['sys', 'dialogue_count', 'number']];

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
	case 'http-request':
		return Object.assign(base, { title: 'HTTP Request',
		    variables: [], method: 'get', url: '',
		    authorization: { type: 'no-auth', config: null },
		    headers: '', params: '', body: { type: 'none', data: [] },
		    ssl_verify: true, timeout: { max_connect_timeout: 0,
			max_read_timeout: 0, max_write_timeout: 0 },
		    retry_config: { retry_enabled: true, max_retries: 3,
			retry_interval: 100 } });
	default:
		return Object.assign(base, MORE[t] ? MORE[t]() :
		    { title: t });
	}
}

const MODEL = () => ({ provider: '', name: '', mode: 'chat',
    completion_params: { temperature: 0.7 } });

/* The other node types' data as Dify's default.ts makes it. */
const MORE = {
	'question-classifier': () => ({ title: 'Question Classifier',
	    query_variable_selector: [], model: MODEL(),
	    classes: [{ id: '1', name: '' }, { id: '2', name: '' }],
	    instruction: '', vision: { enabled: false } }),
	'parameter-extractor': () => ({ title: 'Parameter Extractor',
	    query: [], model: MODEL(), reasoning_mode: 'prompt',
	    parameters: [], instruction: '', vision: { enabled: false } }),
	'knowledge-retrieval': () => ({ title: 'Knowledge Retrieval',
	    query_variable_selector: [], dataset_ids: [],
	    retrieval_mode: 'multiple', multiple_retrieval_config: {
		top_k: 4, score_threshold: null,
		score_threshold_enabled: false, reranking_enable: false } }),
	'document-extractor': () => ({ title: 'Doc Extractor',
	    variable_selector: [], is_array_file: false }),
	'list-operator': () => ({ title: 'List Operator', variable: [],
	    var_type: 'array[string]', item_var_type: 'string',
	    filter_by: { enabled: false, conditions: [] },
	    extract_by: { enabled: false, serial: '1' },
	    order_by: { enabled: false, key: '', value: 'asc' },
	    limit: { enabled: false, size: 10 } }),
	assigner: () => ({ title: 'Variable Assigner', version: '2',
	    items: [] }),
	tool: () => ({ title: 'Tool', provider_id: '', provider_type:
	    'builtin', provider_name: '', tool_name: '', tool_label: '',
	    tool_parameters: {}, tool_configurations: {},
	    tool_node_version: '2' }),
	agent: () => ({ title: 'Agent',
	    agent_strategy_provider_name: 'langgenius/agent/agent',
	    agent_strategy_name: 'function_calling',
	    agent_strategy_label: 'FunctionCalling',
	    agent_parameters: {
		model: { type: 'constant', value: { provider: '', model: '',
		    mode: 'chat', model_type: 'llm',
		    completion_params: {} } },
		instruction: { type: 'constant', value: '' },
		query: { type: 'constant', value: '{{#sys.query#}}' },
		maximum_iterations: { type: 'constant', value: 5 },
		tools: { type: 'constant', value: [] } },
	    output_schema: {} }),
	iteration: () => ({ title: 'Iteration', iterator_selector: [],
	    output_selector: [], output_type: 'array[string]',
	    is_parallel: false, parallel_nums: 10,
	    error_handle_mode: 'terminated', start_node_id: '',
	    _children: [] }),
	loop: () => ({ title: 'Loop', loop_count: 10,
	    break_conditions: [], logical_operator: 'and',
	    loop_variables: [], start_node_id: '', _children: [] }),
	'loop-end': () => ({ title: 'Exit Loop' }),
};

/* The source handles of node n, in Dify's order: an if-else's cases then
 * ELSE ('false'), a classifier's classes; an end none; anything else one
 * 'source'; then 'fail-branch' on a node whose error strategy is the fail
 * branch. */
export function sourceHandles(n) {
	const d = n.data || {};
	if (d.type === 'if-else')
		return (d.cases || []).map((c) => c.case_id).concat('false');
	let hs;
	if (d.type === 'question-classifier')
		hs = (d.classes || []).map((c) => c.id);
	else
		hs = d.type === 'end' || d.type === 'loop-end' ? [] :
		    ['source'];
	if (ERROR_NODES.includes(d.type) && d.error_strategy === 'fail-branch')
		hs.push('fail-branch');
	return hs;
}

/* An iteration or a loop: a container of nodes. */
export const isBox = (n) => !!n && !!n.data && (n.data.type === 'iteration' ||
    n.data.type === 'loop');

/* What the nodes inside container data d read of it: an iteration's item
 * (of its input's element type) and index, a loop's variables and index. */
export function innerOf(d) {
	if (d.type === 'iteration')
		return [['item', String(d.iterator_input_type ||
		    'array[string]').replace(/^array\[(.*)\]$/, '$1')],
		    ['index', 'number']];
	if (d.type === 'loop')
		return (d.loop_variables || []).map((v) => [v.label,
		    v.var_type || 'string']).filter(([k]) => k)
		    .concat([['index', 'number']]);
	return [];
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
	/* the containers node id is in, innermost first */
	const ancestors = (id) => {
		const out = [];
		for (let n = node(id); n && n.parentId && out.length < 32;
		    n = node(n.parentId))
			out.push(n.parentId);
		return out;
	};
	/* a new child n of container par, as Dify marks one */
	const inside = (n, par) => {
		const k = par.data.type;
		n.parentId = par.id;
		n.extent = 'parent';
		n.zIndex = 1002;
		n.data[k === 'loop' ? 'isInLoop' : 'isInIteration'] = true;
		n.data[k + '_id'] = par.id;
	};

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
		doc, node, nodes, edges, ancestors,
		chat: false,	/* a chatflow: sys.query and the like too */
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

		/*
		 * Adds a node of type t at pos; returns its id. In a container
		 * (parent: an iteration's or a loop's id) pos is relative to
		 * it, as Dify keeps a child's position. An iteration or a loop
		 * comes with its start node inside.
		 */
		addNode(t, pos, parent) {
			const par = parent ? node(parent) : null;
			if (par && !isBox(par))
				return null;
			if (par && (t === 'start' || isBox({ data: { type: t } })))
				return null;
			return change('add', () => {
				const id = newId();
				const data = defaults(t);
				const same = nodes().filter((n) => n.data &&
				    n.data.type === t).length;
				if (same && t !== 'start')
					data.title += ' ' + (same + 1);
				const n = { id, type: 'custom', data,
				    position: { x: pos.x, y: pos.y },
				    positionAbsolute: { x: pos.x, y: pos.y },
				    width: 244, height: 90,
				    sourcePosition: 'right',
				    targetPosition: 'left', selected: false };
				if (par)
					inside(n, par);
				nodes().push(n);
				if (isBox(n)) {
					n.width = 508;
					n.height = 204;
					n.zIndex = 1;
					const k = t;	/* iteration or loop */
					const sid = id + 'start';
					data.start_node_id = sid;
					nodes().push({ id: sid, type: 'custom-' +
					    k + '-start', parentId: id,
					    position: { x: 24, y: 68 },
					    positionAbsolute: { x: pos.x + 24,
						y: pos.y + 68 },
					    width: 44, height: 48,
					    draggable: false, selectable: false,
					    extent: 'parent', zIndex: 1002,
					    data: { type: k + '-start', title: '',
						desc: '', selected: false,
						[k === 'loop' ? 'isInLoop' :
						'isInIteration']: true } });
				}
				return id;
			});
		},
		/* Adds a copy of node data d at pos (a second start is
		 * refused: null); returns its id. */
		paste(d, pos) {
			if ((d.type === 'start' && nodes().some((n) => n.data &&
			    n.data.type === 'start')) || /-start$/.test(d.type) ||
			    isBox({ data: d }))
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
		/* Removes node id and its edges (a container: with what is
		 * inside it; a container's start node stays). */
		removeNode(id) {
			const n = node(id);
			if (!n || /-start$/.test((n.data || {}).type || ''))
				return;
			change('delete', () => {
				const gone = new Set([id]);
				for (let more = true; more;) {
					more = false;
					for (const m of nodes())
						if (m.parentId && gone.has(
						    m.parentId) && !gone.has(m.id)) {
							gone.add(m.id);
							more = true;
						}
				}
				doc.graph.nodes = nodes().filter((m) =>
				    !gone.has(m.id));
				doc.graph.edges = edges().filter((e) =>
				    !gone.has(e.source) && !gone.has(e.target));
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
			    (t.data && /(^|-)start$/.test(t.data.type)) ||
			    (s.parentId || '') !== (t.parentId || '') ||
			    !sourceHandles(s).includes(sh) ||
			    edges().some((e) => e.source === source &&
			    (e.sourceHandle || 'source') === sh &&
			    e.target === target) ||
			    ed.upstream(source).includes(target))
				return null;
			return change('connect', () => {
				const id = source + '-' + sh + '-' + target +
				    '-target';
				const par = s.parentId ? node(s.parentId) : null;
				const k = par && par.data.type;
				const e = { id, type: 'custom', source,
				    sourceHandle: sh, target,
				    targetHandle: 'target', zIndex: par ? 1002 : 0,
				    data: { sourceType: s.data.type,
					targetType: t.data.type,
					isInIteration: k === 'iteration',
					isInLoop: k === 'loop' } };
				if (k)
					e.data[k + '_id'] = par.id;
				edges().push(e);
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
			/* inside a container: the container, and what is
			 * upstream of it */
			const n = node(id);
			if (n && n.parentId && node(n.parentId) &&
			    !seen.has(n.parentId)) {
				seen.add(n.parentId);
				for (const u of ed.upstream(n.parentId))
					seen.add(u);
			}
			return [...seen];
		},
		/* What node id can read: [{selector, label, type}] of the
		 * upstream nodes' outputs, then system and environment. */
		variables(id) {
			const out = [];
			const mine = ancestors(id);
			for (const uid of ed.upstream(id)) {
				const n = node(uid);
				const d = (n && n.data) || {};
				/* a container this node is in: its item and
				 * index, or its loop variables, not its output */
				const list = mine.includes(uid) ? innerOf(d) :
				    outputsOf(d);
				for (const [v, type] of list)
					out.push({ selector: [uid, v],
					    label: (d.title || uid) + '.' + v,
					    type });
			}
			for (const [a, b, type] of ed.chat ? CHAT.concat(SYSTEM) :
			    SYSTEM)
				out.push({ selector: [a, b], label: a + '.' + b,
				    type });
			for (const v of doc.environment_variables || [])
				out.push({ selector: ['env', v.name],
				    label: 'env.' + v.name,
				    type: v.value_type === 'number' ?
				    'number' : 'string' });
			for (const v of doc.conversation_variables || [])
				out.push({ selector: ['conversation', v.name],
				    label: 'conversation.' + v.name,
				    type: v.value_type || 'string' });
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
