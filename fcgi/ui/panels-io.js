/*
 * panels-io.js — the panels of the nodes that reach out: http-request
 * (method, URL, authorization, headers, query, body, timeouts, TLS),
 * tool (a tool of ctx.tools, the console's tool providers: built-in, MCP
 * servers, published workflows; with its
 * parameter form: llm parameters as tool_parameters, form ones as
 * tool_configurations, as Dify's tool node v2 keeps them) and agent
 * (strategy, model, instruction, query, tools, iterations). Each writes
 * the fields Dify's panel writes. Imports dom.js and fields.js.
 */
import { el, uid } from './dom.js';
import { labelled, select, templated, text, input, checkbox, model,
    fieldset, del } from './fields.js';

export const IO = {};

IO['http-request'] = (d, vars, set) => {
	const method = select('h-method', 'Method', ['get', 'post', 'put',
	    'patch', 'delete', 'head'], d.method || 'get');
	method.addEventListener('change', () => set((x) => {
		x.method = method.value;
	}));
	const body = d.body || { type: 'none', data: [] };
	const bt = select('h-body-type', 'Body type', ['none', 'form-data',
	    'x-www-form-urlencoded', 'json', 'raw-text', 'binary'],
	    body.type || 'none');
	bt.addEventListener('change', () => set((x) => {
		x.body = { type: bt.value, data: bt.value === 'json' ||
		    bt.value === 'raw-text' ? [{ id: uid('b'), type: 'text',
		    key: '', value: '' }] : [] };
	}, true));
	const auth = d.authorization || { type: 'no-auth' };
	const at = select('h-auth', 'Authorization', [['no-auth', 'None'],
	    ['api-key', 'API key']], auth.type || 'no-auth');
	at.addEventListener('change', () => set((x) => {
		x.authorization = at.value === 'api-key' ? { type: 'api-key',
		    config: { type: 'bearer', api_key: '', header: '' } } :
		    { type: 'no-auth', config: null };
	}, true));
	const out = [el('div', { class: 'row' }, labelled('Method', method),
	    labelled('Authorization', at)),
	    templated('URL', d.url, vars, 'h-url', (v) => set((x) => {
		x.url = v;
	    }))];
	if (auth.type === 'api-key') {
		const c = auth.config || {};
		const kt = select('h-key-type', 'Key type', [['bearer',
		    'Bearer'], ['basic', 'Basic'], ['custom', 'Custom']],
		    c.type || 'bearer');
		const key = input('h-key', 'API key', c.api_key, () => upd());
		const hdr = input('h-key-header', 'Header', c.header, () =>
		    upd());
		const upd = () => set((x) => {
			x.authorization.config = { type: kt.value,
			    api_key: key.value, header: hdr.value };
		});
		kt.addEventListener('change', upd);
		out.push(el('div', { class: 'row' }, labelled('Key type', kt),
		    labelled('API key', key), labelled('Header', hdr)));
	}
	out.push(templated('Headers (one "Name: value" a line)', d.headers,
	    vars, 'h-headers', (v) => set((x) => {
		x.headers = v;
	    })), templated('Query parameters (one "name: value" a line)',
	    d.params, vars, 'h-params', (v) => set((x) => {
		x.params = v;
	    })), labelled('Body', bt));
	if (body.type !== 'none' && body.type !== 'binary') {
		const raw = body.type === 'json' || body.type === 'raw-text';
		const first = (body.data || [])[0] || {};
		out.push(templated(raw ? 'Body text' : 'Body fields (one ' +
		    '"key: value" a line)', raw ? first.value :
		    (body.data || []).map((b) => b.key + ': ' + b.value)
		    .join('\n'), vars, 'h-body', (v) => set((x) => {
			x.body.data = raw ? [{ id: first.id || uid('b'),
			    type: 'text', key: '', value: v }] :
			    v.split('\n').filter((l) => l.trim()).map((l) => {
				const at_ = l.indexOf(':');
				return { id: uid('b'), type: 'text',
				    key: (at_ < 0 ? l : l.slice(0, at_)).trim(),
				    value: at_ < 0 ? '' :
				    l.slice(at_ + 1).trim() };
			    });
		    })));
	}
	const t = d.timeout || {};
	const tput = (k) => (v) => set((x) => {
		x.timeout = Object.assign(x.timeout || {}, { [k]: v });
	});
	out.push(fieldset('Timeouts (seconds, 0: the server\'s)', 'h-timeouts',
	    el('div', { class: 'row' },
		labelled('Connect', input('h-t-connect', 'Connect timeout',
		    t.max_connect_timeout ?? 0, tput('max_connect_timeout'),
		    'number')),
		labelled('Read', input('h-t-read', 'Read timeout',
		    t.max_read_timeout ?? 0, tput('max_read_timeout'),
		    'number')),
		labelled('Write', input('h-t-write', 'Write timeout',
		    t.max_write_timeout ?? 0, tput('max_write_timeout'),
		    'number')))),
	    checkbox('h-ssl', 'Verify the TLS certificate', d.ssl_verify !==
	    false, (on) => set((x) => {
		x.ssl_verify = on;
	    })));
	return out;
};

/*
 * The id a tool node names provider p by, as Dify writes it: an MCP
 * server's server_identifier, a workflow tool's app, a built-in's name.
 */
const pid = (p) => p.type === 'mcp' ? p.server_identifier || p.id : p.id;

/* The tools of ctx.tools as <option>s "provider/tool". */
function toolOptions(ctx) {
	const out = [['', '— choose a tool —']];
	for (const p of (ctx && ctx.tools) || [])
		for (const t of p.tools || [])
			out.push([pid(p) + '/' + t.name, text(p.label) + ' · ' +
			    text(t.label) + (p.type && p.type !== 'builtin' ?
			    ' (' + p.type + ')' : '')]);
	return out;
}
function findTool(ctx, key) {
	for (const p of (ctx && ctx.tools) || [])
		for (const t of p.tools || [])
			if (pid(p) + '/' + t.name === key)
				return { p, t };
	return null;
}

IO.tool = (d, vars, set, ctx) => {
	const key = d.provider_id ? d.provider_id + '/' + d.tool_name : '';
	const pick = select('t-tool', 'Tool', toolOptions(ctx), key);
	pick.addEventListener('change', () => set((x) => {
		const f = findTool(ctx, pick.value);
		if (!f)
			return;
		Object.assign(x, { provider_id: pid(f.p),
		    provider_type: f.p.type || 'builtin',
		    provider_name: f.p.type === 'mcp' ? pid(f.p) : f.p.name ||
		    f.p.id, tool_name: f.t.name,
		    tool_label: text(f.t.label),
		    tool_description: text(f.t.description),
		    tool_parameters: {}, tool_configurations: {},
		    tool_node_version: '2' });
		if (!x.title || /^Tool( \d+)?$/.test(x.title))
			x.title = text(f.t.label);
	}, true));
	const out = [labelled('Tool', pick)];
	const f = findTool(ctx, key);
	if (!f) {
		if (key)
			out.push(el('p', { class: 'muted small', text: key +
			    ' is not among the tool providers here.' }));
		return out;
	}
	const box = fieldset('Inputs', 't-params');
	for (const prm of f.t.parameters || []) {
		const label = text(prm.label) || prm.name;
		if (prm.form === 'form') {
			const c = (d.tool_configurations || {})[prm.name];
			const cur = c && typeof c === 'object' ? c.value : c;
			const ctl = (prm.options || []).length ? select(
			    't-conf', label, (prm.options || []).map((o) =>
			    [o.value, text(o.label) || o.value]), cur) :
			    input('t-conf', label, cur, () => {});
			ctl.dataset.param = prm.name;
			ctl.addEventListener('change', () => set((x) => {
				x.tool_configurations = Object.assign(
				    x.tool_configurations || {}, { [prm.name]:
				    { type: 'constant', value: ctl.value } });
			}));
			box.append(labelled(label + (prm.required ? ' *' : ''),
			    ctl));
			continue;
		}
		const tp = (d.tool_parameters || {})[prm.name] || {};
		const area = templated(label + (prm.required ? ' *' : '') +
		    ' (' + (prm.type || 'string') + ')', typeof tp.value ===
		    'string' ? tp.value : '', vars, 't-param', (v) =>
		    set((x) => {
			x.tool_parameters = Object.assign(
			    x.tool_parameters || {}, { [prm.name]:
			    { type: 'mixed', value: v } });
		    }));
		area.querySelector('textarea').dataset.param = prm.name;
		box.append(area);
	}
	out.push(box);
	return out;
};

IO.agent = (d, vars, set, ctx) => {
	const ap = d.agent_parameters || {};
	const mv = (ap.model && ap.model.value) || {};
	const strat = select('ag-strategy', 'Strategy', [['function_calling',
	    'FunctionCalling'], ['ReAct', 'ReAct']],
	    d.agent_strategy_name || 'function_calling');
	strat.addEventListener('change', () => set((x) => {
		x.agent_strategy_name = strat.value;
		x.agent_strategy_label = strat.value === 'ReAct' ? 'ReAct' :
		    'FunctionCalling';
	}));
	const param = (k, v) => (x) => {
		x.agent_parameters = x.agent_parameters || {};
		x.agent_parameters[k] = { type: 'constant', value: v };
	};
	const tools = ((ap.tools && ap.tools.value) || []);
	const box = fieldset('Tools', 'ag-tools');
	tools.forEach((t, i) => box.append(el('div', { class: 'row prow' },
	    el('span', { class: 'ag-tool', text: t.provider_name + ' · ' +
		(t.tool_label || t.tool_name) }),
	    del('Remove tool ' + (i + 1), () => set((x) => {
		x.agent_parameters.tools.value.splice(i, 1);
	    }, true)))));
	const pick = select('ag-tool-add', 'Add a tool', toolOptions(ctx), '');
	pick.addEventListener('change', () => {
		const f = findTool(ctx, pick.value);
		if (!f)
			return;
		set((x) => {
			const l = ((x.agent_parameters || {}).tools || {})
			    .value || [];
			const params = {};
			for (const prm of f.t.parameters || [])
				if (prm.form !== 'form')
					params[prm.name] = { auto: 1,
					    value: null };
			l.push({ enabled: true, type: f.p.type || 'builtin',
			    provider_name: f.p.type === 'mcp' ? pid(f.p) :
			    f.p.name || f.p.id,
			    tool_name: f.t.name, tool_label: text(f.t.label),
			    settings: {}, parameters: params,
			    extra: { description: '' } });
			param('tools', l)(x);
		}, true);
	});
	box.append(labelled('Add a tool', pick));
	const iters = input('ag-iter', 'Maximum iterations',
	    (ap.maximum_iterations || {}).value ?? 5, (v) => set(param(
	    'maximum_iterations', v)), 'number');
	return [labelled('Strategy', strat), model({ provider: mv.provider,
	    model: mv.model }, set, (x, p, n) => param('model', Object.assign(
	    {}, mv, { provider: p, model: n, mode: mv.mode || 'chat',
	    model_type: 'llm' }))(x), ctx),
	    templated('Instruction', (ap.instruction || {}).value, vars,
		'ag-instruction', (v) => set(param('instruction', v))),
	    templated('Query', (ap.query || {}).value, vars, 'ag-query',
		(v) => set(param('query', v))),
	    box, labelled('Maximum iterations', iters)];
};
