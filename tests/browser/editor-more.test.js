#!/usr/bin/env node
/*
 * editor-more.test.js — the admin page's editor past the first slice, in a
 * real browser (Debian's chromium, headless, playwright-core); TAP lines
 * as editor.test.js prints them. tests/e2e/t_admin_editor.sh runs it with
 * ADMIN_URL, ADMIN_TOKEN, CHROMIUM, OUT_DIR and LLM (the fake LLM's base,
 * to script its answers).
 *
 * - Templates: each of the create form's templates makes an app through
 *   the import route, its checklist empty (the knowledge chatbot's once a
 *   knowledge base is ticked in its retrieval node's panel), published
 *   from the editor and run through the service API: the workflow's LLM
 *   and code node, the chatflow's retrieved chunks, the agent's tool call.
 * - Every other node type from the palette with its panel: the fields each
 *   panel writes are in the saved draft; an iteration with a node put
 *   inside it, a list operator and an HTTP request's fail branch make a
 *   workflow that runs.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { chromium } = require('playwright-core');

const URL_ = process.env.ADMIN_URL;
const TOKEN = process.env.ADMIN_TOKEN;
const LLM = process.env.LLM;
const OUT = process.env.OUT_DIR || fs.mkdtempSync('/tmp/editor-more-');
const PREFIX = new URL('..', URL_).href;	/* http://host/flow/ */

let failed = 0;
function ok(cond, what, detail) {
	console.log((cond ? 'ok - ' : 'not ok - ') + what);
	if (!cond) {
		failed++;
		if (detail !== undefined)
			console.log('#   got: ' + JSON.stringify(detail));
	}
	return cond;
}
async function shot(page, name) {
	const f = path.join(OUT, name + '.png');
	await page.screenshot({ path: f, fullPage: true });
	ok(fs.statSync(f).size > 1000, 'screenshot ' + name + '.png');
}

async function call(url, method, body, token) {
	const res = await fetch(url, { method, headers: {
	    Authorization: 'Bearer ' + (token || TOKEN),
	    'Content-Type': 'application/json' },
	    body: body === undefined ? undefined : JSON.stringify(body) });
	const text = await res.text();
	let json = null;
	try {
		json = JSON.parse(text);
	} catch (e) { /* not JSON */ }
	return { status: res.status, json, text };
}
const consoleApi = (m, p, b) => call(PREFIX + 'console/api/' + p, m, b);
const service = (key, p, b) => call(PREFIX + 'v1/' + p, 'POST', b, key);
const script = (responses) => fetch(LLM + '/_script', { method: 'POST',
    body: JSON.stringify({ responses }) });

async function until(page, fn, n) {
	for (let i = 0; i < (n || 100); i++) {
		const v = await fn();
		if (v)
			return v;
		await page.waitForTimeout(50);
	}
	return fn();
}

const sel = (id) => '#editor .gnode[data-id="' + id + '"]';
const checks = (page) => page.locator('#edit-checks li').allTextContents();

async function saved(page) {
	return until(page, async () => {
		const s = await page.locator('#edit-state').textContent();
		return /^Draft saved|^Not saved/.test(s) ? s : null;
	});
}
async function draftOf(app) {
	return (await consoleApi('GET', 'apps/' + app +
	    '/workflows/draft')).json;
}
async function open(page, id) {
	await page.locator(sel(id) + ' .gtitle').click();
	await page.locator('#edit-panel .node-config').waitFor();
}
async function commit(loc, value) {
	await loc.fill(value);
	await loc.dispatchEvent('change');
}
/* Chooses the option whose text contains s in a <select>. */
async function choose(loc, s) {
	const v = await loc.evaluate((e, s_) => {
		const o = [...e.options].find((x) => x.text.includes(s_));
		return o ? o.value : null;
	}, s);
	if (v === null)
		throw new Error('no option "' + s + '" in ' + await loc.evaluate(
		    (e) => [...e.options].map((x) => x.text).join(' | ')));
	await loc.selectOption(v);
}
async function add(page, t) {
	const before = await page.locator('#editor .gnode').count();
	await page.locator('.pal[data-type="' + t + '"]').click();
	await until(page, async () => await page.locator('#editor .gnode')
	    .count() > before);
	/* the view fits the graph again on the next frame */
	await page.evaluate(() => new Promise((r) => requestAnimationFrame(
	    () => requestAnimationFrame(r))));
	return page.locator('#editor .gnode.selected').getAttribute('data-id');
}
async function connect(page, a, h, b) {
	const hb = await page.locator(sel(a) + ' .h-source[data-handle="' + h +
	    '"]').boundingBox();
	const tb = await page.locator(sel(b) + ' .gbox').first().boundingBox();
	await page.mouse.move(hb.x + hb.width / 2, hb.y + hb.height / 2);
	await page.mouse.down();
	await page.mouse.move(tb.x + 30, tb.y + 20, { steps: 6 });
	await page.mouse.up();
}
async function publish(page) {
	await page.locator('#edit-publish').click();
	await until(page, async () => /Published|Not published/.test(
	    await page.locator('#flash').textContent()));
	return page.locator('#flash').textContent();
}
async function keyOf(app) {
	return (await consoleApi('POST', 'apps/' + app + '/api-keys')).json
	    .token;
}

/* ====== Templates ====== */

let counterApp = null;	/* published: a workflow tool for panels() */

async function dataset() {
	const ds = await consoleApi('POST', 'datasets', { name: 'Shop',
	    indexing_technique: 'economy' });
	const id = ds.json && ds.json.id;
	const doc = await consoleApi('POST', 'datasets/' + id +
	    '/document/create-by-text', { name: 'shop.txt',
	    text: 'refunds are paid within fourteen days\nshipping takes ' +
	    'three days', process_rule: { mode: 'custom', rules: {
		pre_processing_rules: [], segmentation: { separator: '\n',
		max_tokens: 100 } } } });
	for (let i = 0; i < 200; i++) {
		const st = await consoleApi('GET', 'datasets/' + id +
		    '/documents/' + doc.json.batch + '/indexing-status');
		if (st.json && st.json.data && st.json.data[0] &&
		    st.json.data[0].indexing_status === 'completed')
			return id;
		await new Promise((r) => setTimeout(r, 50));
	}
	return null;
}

/* Creates an app from the create form's template named label. */
async function fromTemplate(page, label, name) {
	await page.goto(URL_ + '#/apps');
	await page.locator('#apps-list').waitFor();
	await choose(page.locator('#new-from'), label);
	const auto = await page.locator('#new-name').inputValue();
	const mode = await page.locator('#new-mode').inputValue();
	if (name)
		await page.locator('#new-name').fill(name);
	await page.locator('#create-form button[type=submit]').click();
	await page.waitForURL(/#\/app\/[^/]+\/edit$/);
	await page.locator('#editor .gnode').first().waitFor();
	const app = /#\/app\/([^/]+)\/edit$/.exec(page.url())[1];
	return { app, auto, mode };
}

async function templates(page) {
	const ds = await dataset();
	ok(!!ds, 'a knowledge base of two chunks is indexed');
	await page.goto(URL_ + '#/apps');
	await page.locator('#new-from').waitFor();
	const opts = await page.locator('#new-from option').allTextContents();
	ok(opts.length === 4 && opts[0] === 'Blank', 'the create form offers ' +
	    'Blank and three templates', opts);
	await shot(page, 'create-templates');

	/* the workflow: LLM, then code */
	let t = await fromTemplate(page, 'Summarise and count', 'Counter');
	counterApp = t.app;
	ok(t.auto === 'Summarise and count' && t.mode === 'workflow',
	    'choosing a template fills in its name and mode', t);
	let a = await consoleApi('GET', 'apps/' + t.app);
	ok(a.json && a.json.name === 'Counter' && a.json.mode === 'workflow',
	    'the app is made with the name typed, a workflow', a.json);
	ok(await page.locator('#editor .gnode').count() === 4 &&
	    (await checks(page)).length === 0, 'its Edit tab opens: four ' +
	    'nodes, the checklist empty', await checks(page));
	ok(/Published/.test(await publish(page)), 'it publishes from the ' +
	    'editor');
	let key = await keyOf(t.app);
	await script([{ text: 'one two three' }]);
	let r = await service(key, 'workflows/run', { inputs: { text:
	    'a long text' }, response_mode: 'blocking', user: 'e2e' });
	ok(r.status === 200 && r.json.data.status === 'succeeded' &&
	    r.json.data.outputs.summary === 'one two three' &&
	    r.json.data.outputs.words === 3, 'it runs: the LLM\'s summary ' +
	    'and the code node\'s count of its words', r.json);

	/* the chatflow: knowledge retrieval, then the LLM */
	t = await fromTemplate(page, 'Knowledge chatbot');
	const c0 = await checks(page);
	ok(c0.length === 1 && /no knowledge base is chosen/.test(c0[0]),
	    'the knowledge chatbot asks for a knowledge base first', c0);
	await open(page, 'retrieve');
	await page.locator('#edit-panel .kr-ds').check();
	ok(/^Draft saved/.test(await saved(page)) &&
	    (await checks(page)).length === 0, 'ticking it in the retrieval ' +
	    'node\'s panel empties the checklist', await checks(page));
	let dr = await draftOf(t.app);
	const kr = dr.graph.nodes.find((n) => n.id === 'retrieve');
	ok(JSON.stringify(kr.data.dataset_ids) === JSON.stringify([ds]),
	    'the draft\'s retrieval node reads that knowledge base',
	    kr.data);
	await shot(page, 'panel-knowledge-retrieval');
	ok(/Published/.test(await publish(page)), 'it publishes');
	key = await keyOf(t.app);
	await script([{ text: 'Within fourteen days.' }]);
	r = await service(key, 'chat-messages', { query: 'when are refunds ' +
	    'paid', inputs: {}, response_mode: 'blocking', user: 'e2e' });
	const res = (r.json && r.json.metadata &&
	    r.json.metadata.retriever_resources) || [];
	const sent = await (await fetch(LLM + '/_requests')).json();
	const sys = JSON.stringify(sent.length ? sent[sent.length - 1]
	    .body.messages[0] : null);
	ok(r.status === 200 && r.json.answer === 'Within fourteen days.' &&
	    res.some((x) => /fourteen/.test(x.content)) &&
	    /fourteen days/.test(sys), 'it runs: the chunk retrieved is in ' +
	    'the LLM\'s context and in retriever_resources', [r.json, sys]);

	/* the agent: a tool call, then the answer */
	t = await fromTemplate(page, 'Agent with tools');
	ok((await checks(page)).length === 0, 'the agent template\'s ' +
	    'checklist is empty', await checks(page));
	await open(page, 'agent');
	const tools = await page.locator('#edit-panel .ag-tool')
	    .allTextContents();
	ok(tools.length === 2 && /current_time|Current Time/.test(tools[0]),
	    'the agent panel lists its two tools', tools);
	await shot(page, 'panel-agent');
	ok(/Published/.test(await publish(page)), 'it publishes');
	key = await keyOf(t.app);
	await script([{ tool_calls: [{ id: 'c1', name: 'current_time',
	    arguments: { timezone: 'UTC', format: '%Y' } }] },
	    { text: 'It is this year.' }]);
	r = await service(key, 'chat-messages', { query: 'what year is it',
	    inputs: {}, response_mode: 'blocking', user: 'e2e' });
	const sent2 = await (await fetch(LLM + '/_requests')).json();
	const toolMsg = sent2.length === 2 ? sent2[1].body.messages.find(
	    (m) => m.role === 'tool') : null;
	ok(r.status === 200 && r.json.answer === 'It is this year.' &&
	    toolMsg && String(toolMsg.content).includes(String(
	    new Date().getUTCFullYear())), 'it runs: the model calls ' +
	    'current_time, gets the year back, answers', [r.json, toolMsg]);
}

/* ====== Every node type with its panel ====== */

async function panels(page) {
	const mp = await consoleApi('POST', 'workspaces/current/' +
	    'model-providers/fakeprov', { protocol: 'openai', base_url: LLM +
	    '/v1', api_key: 'sk-x', models: ['fast-1', 'slow-2'] });
	ok(mp.status === 200, 'a model provider is configured', mp.text);
	const c = await consoleApi('POST', 'apps', { name: 'Panels',
	    mode: 'advanced-chat' });
	const app = c.json.id;
	/* a conversation variable for the assigner */
	let d0 = await draftOf(app);
	await consoleApi('POST', 'apps/' + app + '/workflows/draft', {
	    graph: d0.graph, features: d0.features || {},
	    environment_variables: [], conversation_variables: [{
		id: 'cv1', name: 'seen', value_type: 'string', value: '',
		description: '' }], hash: d0.hash });
	await page.goto(URL_ + '#/app/' + app + '/edit');
	await page.locator('#editor').waitFor();
	const pal = await page.locator('#palette .pal').evaluateAll((l) =>
	    l.map((b) => b.dataset.type));
	const want = ['start', 'llm', 'knowledge-retrieval', 'answer', 'end',
	    'agent', 'question-classifier', 'if-else', 'iteration', 'loop',
	    'loop-end', 'code', 'template-transform', 'variable-aggregator',
	    'document-extractor', 'assigner', 'parameter-extractor',
	    'http-request', 'list-operator', 'tool'];
	ok(want.every((t) => pal.includes(t)), 'the palette has every node ' +
	    'type the engine runs', pal);
	const start = await add(page, 'start');
	await page.locator('#edit-panel .s-add').click();
	await commit(page.locator('#edit-panel .s-name'), 'doc');
	await page.locator('#edit-panel .s-type').selectOption('file-list');

	/* question classifier: classes are handles */
	const qc = await add(page, 'question-classifier');
	await connect(page, start, 'source', qc);
	await open(page, qc);
	await choose(page.locator('#edit-panel .qc-query'), 'sys.query');
	await commit(page.locator('#edit-panel .m-provider'), 'openai');
	await commit(page.locator('#edit-panel .m-name'), 'gpt-4o-mini');
	const sug = await page.locator('#edit-panel datalist option')
	    .evaluateAll((l) => l.map((o) => o.value));
	ok(sug.includes('fakeprov') && sug.includes('fast-1') &&
	    sug.includes('slow-2'), 'the model fields suggest the configured ' +
	    'providers and their models', sug);
	await page.locator('#edit-panel .qc-add').click();
	const cls = page.locator('#edit-panel .qc-class');
	for (const [i, n] of ['refund', 'shipping', 'other'].entries())
		await commit(cls.nth(i), n);
	ok(await page.locator(sel(qc) + ' .h-source').count() === 3,
	    'a classifier with three classes has three handles');
	await shot(page, 'panel-question-classifier');

	/* the other types, each after the classifier's first class */
	const ids = {};
	for (const t of ['parameter-extractor', 'document-extractor',
	    'assigner', 'tool', 'http-request', 'loop']) {
		await open(page, qc);
		ids[t] = await add(page, t);
		await connect(page, qc, '1', ids[t]);
	}
	await open(page, ids['parameter-extractor']);
	await choose(page.locator('#edit-panel .pe-query'), 'sys.query');
	await commit(page.locator('#edit-panel .m-provider'), 'openai');
	await commit(page.locator('#edit-panel .m-name'), 'gpt-4o-mini');
	await page.locator('#edit-panel .pe-add').click();
	await commit(page.locator('#edit-panel .pe-name'), 'order');
	await commit(page.locator('#edit-panel .pe-desc'), 'the order number');
	await page.locator('#edit-panel .pe-type').selectOption('number');
	await shot(page, 'panel-parameter-extractor');

	await open(page, ids.assigner);
	await page.locator('#edit-panel .as-add').click();
	await choose(page.locator('#edit-panel .as-var'), 'conversation.seen');
	await choose(page.locator('#edit-panel .as-from'), 'sys.query');
	await shot(page, 'panel-assigner');

	await open(page, ids.tool);
	await choose(page.locator('#edit-panel .t-tool'), 'current_time');
	await page.locator('#edit-panel textarea.t-param[data-param="format"]')
	    .waitFor();
	await commit(page.locator('#edit-panel textarea.t-param' +
	    '[data-param="format"]'), '%Y');
	await shot(page, 'panel-tool');
	/* a published workflow is a tool too */
	await open(page, qc);
	const wt = await add(page, 'tool');
	await connect(page, qc, '2', wt);
	await open(page, wt);
	await choose(page.locator('#edit-panel .t-tool'), 'Counter · ');
	await commit(page.locator('#edit-panel textarea.t-param' +
	    '[data-param="text"]'), '{{#sys.query#}}');

	await open(page, ids['http-request']);
	await page.locator('#edit-panel .h-method').selectOption('post');
	await commit(page.locator('#edit-panel textarea.h-url'),
	    'http://example.invalid/{{#sys.query#}}');
	await page.locator('#edit-panel .h-body-type').selectOption('json');
	await commit(page.locator('#edit-panel textarea.h-body'),
	    '{"q": "{{#sys.query#}}"}');
	await page.locator('#edit-panel .err-strategy').selectOption(
	    'fail-branch');
	ok(await page.locator(sel(ids['http-request']) + ' .h-source' +
	    '[data-handle="fail-branch"]').count() === 1, 'an HTTP request ' +
	    'that takes the fail branch on error gets a FAIL handle');
	await shot(page, 'panel-http-request');

	await open(page, ids.loop);
	await page.locator('#edit-panel .lp-var-add').click();
	await commit(page.locator('#edit-panel .lp-var-name'), 'n');
	await page.locator('#edit-panel .lp-var-type').selectOption('number');
	await commit(page.locator('#edit-panel .lp-var-value'), '0');
	await page.locator('#edit-panel .lp-b-add').click();
	await commit(page.locator('#edit-panel .lp-count'), '3');
	/* inside the selected loop: an exit */
	const exit = await add(page, 'loop-end');
	await shot(page, 'panel-loop');
	await open(page, ids['document-extractor']);
	await choose(page.locator('#edit-panel .de-var'), 'Start.doc');
	await shot(page, 'panel-document-extractor');

	/* ten nodes: the minimap shows; a click there moves the view */
	const mini = page.locator('#editor svg.minimap');
	const before = await page.locator('#editor .viewport')
	    .getAttribute('transform');
	const mb = await mini.boundingBox();
	ok(await page.locator('#editor .gnode').count() >= 10 &&
	    await mini.isVisible() && await mini.locator('.mini-node')
	    .count() === await page.locator('#editor .gnode').count(),
	    'a graph of ten nodes has a minimap of them');
	await page.mouse.click(mb.x + 4, mb.y + 4);
	ok(await page.locator('#editor .viewport').getAttribute(
	    'transform') !== before, 'a click on the minimap moves the view ' +
	    'there');
	await page.locator('#edit-fit').click();
	ok(await page.locator('#editor .viewport').getAttribute(
	    'transform') === before, 'Fit zooms back to the whole graph');
	await shot(page, 'editor-minimap');

	ok(/^Draft saved/.test(await saved(page)), 'the panels\' changes ' +
	    'are saved');
	const dr = await draftOf(app);
	const N = (id) => dr.graph.nodes.find((n) => n.id === id).data;
	const q = N(qc), pe = N(ids['parameter-extractor']);
	const as = N(ids.assigner), tl = N(ids.tool);
	const h = N(ids['http-request']), lp = N(ids.loop);
	const de = N(ids['document-extractor']);
	const wtn = N(wt);
	ok(wtn.provider_type === 'workflow' && wtn.provider_id === counterApp &&
	    JSON.stringify(wtn.tool_parameters) === JSON.stringify({ text: {
	    type: 'mixed', value: '{{#sys.query#}}' } }), 'tool: the ' +
	    'published Counter workflow as a workflow tool, its text input ' +
	    'from the query', wtn);
	const sv = N(start).variables[0];
	ok(JSON.stringify(de.variable_selector) === JSON.stringify([start,
	    'doc']) && de.is_array_file === true && sv.type === 'file-list' &&
	    JSON.stringify(sv.allowed_file_upload_methods) ===
	    '["local_file","remote_url"]', 'document-extractor: the start\'s ' +
	    'file list, as an array of files', [de, sv]);
	ok(JSON.stringify(q.classes.map((x) => [x.id, x.name])) ===
	    '[["1","refund"],["2","shipping"],["3","other"]]' &&
	    JSON.stringify(q.query_variable_selector) === '["sys","query"]' &&
	    q.model.name === 'gpt-4o-mini', 'question-classifier: classes, ' +
	    'query, model', q);
	ok(JSON.stringify(pe.parameters) === JSON.stringify([{ name: 'order',
	    type: 'number', description: 'the order number',
	    required: false }]) && pe.reasoning_mode === 'prompt' &&
	    JSON.stringify(pe.query) === '["sys","query"]',
	    'parameter-extractor: its parameter, reasoning mode, query', pe);
	ok(as.version === '2' && JSON.stringify(as.items) === JSON.stringify([{
	    variable_selector: ['conversation', 'seen'], input_type: 'variable',
	    operation: 'over-write', value: ['sys', 'query'] }]),
	    'assigner: an over-write of the conversation variable', as);
	ok(tl.provider_id === 'time' && tl.provider_type === 'builtin' &&
	    tl.tool_name === 'current_time' &&
	    JSON.stringify(tl.tool_parameters) === JSON.stringify({ format: {
	    type: 'mixed', value: '%Y' } }), 'tool: the time provider\'s ' +
	    'current_time with its format parameter', tl);
	ok(h.method === 'post' && h.url === 'http://example.invalid/' +
	    '{{#sys.query#}}' && h.body.type === 'json' &&
	    h.body.data[0].value === '{"q": "{{#sys.query#}}"}' &&
	    h.error_strategy === 'fail-branch', 'http-request: method, URL, ' +
	    'JSON body, fail branch', h);
	const exitN = dr.graph.nodes.find((n) => n.id === exit);
	const lstart = dr.graph.nodes.find((n) => n.id === lp.start_node_id);
	ok(JSON.stringify(lp.loop_variables.map((v) => [v.label, v.var_type,
	    v.value])) === '[["n","number",0]]' && lp.loop_count === 3 &&
	    lp.break_conditions.length === 1 && lstart &&
	    lstart.parentId === ids.loop && lstart.data.type === 'loop-start' &&
	    exitN.parentId === ids.loop && exitN.data.isInLoop === true &&
	    exitN.data.loop_id === ids.loop, 'loop: its variable, count and ' +
	    'break condition; its start node and the exit inside it',
	    [lp, lstart, exitN]);
}

const dr0 = (d, id) => d.graph.nodes.find((n) => n.id === id);

/* An iteration with a node inside, a list operator after it, an HTTP
 * request's fail branch: built in the editor, then run. */
async function iteration(page) {
	const c = await consoleApi('POST', 'apps', { name: 'Iterate',
	    mode: 'workflow' });
	const app = c.json.id;
	await page.goto(URL_ + '#/app/' + app + '/edit');
	await page.locator('#editor').waitFor();
	const start = await add(page, 'start');
	await page.locator('#edit-panel .s-add').click();
	await commit(page.locator('#edit-panel .s-name'), 'q');
	const split = await add(page, 'code');
	await connect(page, start, 'source', split);
	await open(page, split);
	await page.locator('#edit-panel .r-add').click();
	await choose(page.locator('#edit-panel .r-sel'), 'Start.q');
	await commit(page.locator('#edit-panel textarea.code'),
	    'def main(q: str) -> dict:\n    return {"result": q.split()}\n');
	await page.locator('#edit-panel .o-type').selectOption('array[string]');
	const it = await add(page, 'iteration');
	await connect(page, split, 'source', it);
	await open(page, it);
	await choose(page.locator('#edit-panel .it-input'), 'Code.result');
	/* with the iteration selected, the template goes inside it */
	const tpl = await add(page, 'template-transform');
	await connect(page, it + 'start', 'source', tpl);
	await open(page, tpl);
	await page.locator('#edit-panel .r-add').click();
	await choose(page.locator('#edit-panel .r-sel'), 'Iteration.item');
	await commit(page.locator('#edit-panel .r-name'), 'w');
	await commit(page.locator('#edit-panel textarea.template'),
	    '<{{ w }}>');
	await open(page, it);
	await choose(page.locator('#edit-panel .it-output'), 'Template.output');
	/* Escape clears the selection: the next node goes outside */
	await page.locator('#editor svg.edit-svg').focus();
	await page.keyboard.press('Escape');
	const lo = await add(page, 'list-operator');
	ok(!(dr0(await draftOf(app), lo) || {}).parentId, 'with nothing ' +
	    'selected a new node goes outside the iteration');
	await connect(page, it, 'source', lo);
	await open(page, lo);
	await choose(page.locator('#edit-panel .lo-var'), 'Iteration.output');
	await page.locator('#edit-panel .lo-limit-on').check();
	await commit(page.locator('#edit-panel .lo-limit'), '2');
	const http = await add(page, 'http-request');
	await connect(page, lo, 'source', http);
	await open(page, http);
	await commit(page.locator('#edit-panel textarea.h-url'),
	    'http://example.invalid/');
	await page.locator('#edit-panel .err-strategy').selectOption(
	    'fail-branch');
	const end = await add(page, 'end');
	await connect(page, http, 'fail-branch', end);
	await open(page, end);
	for (const [i, [n, v]] of [['first', 'List Operator.result'],
	    ['why', 'HTTP Request.error_type']].entries()) {
		await page.locator('#edit-panel .r-add').click();
		await choose(page.locator('#edit-panel .r-sel').nth(i), v);
		await commit(page.locator('#edit-panel .r-name').nth(i), n);
	}
	ok(/^Draft saved/.test(await saved(page)) &&
	    (await checks(page)).length === 0, 'the iteration workflow is ' +
	    'saved with an empty checklist', await checks(page));
	await shot(page, 'panel-iteration');
	ok(await page.locator('#editor svg.minimap').isHidden(),
	    'a graph of eight nodes has no minimap');

	/* the run panel: the draft run, its nodes coloured as they run */
	await page.locator('#edit-run > summary').click();
	await page.locator('#edit-run #in-q').fill('x y z');
	await page.locator('#edit-run-go').click();
	await until(page, async () => page.locator(
	    '#edit-run-status[data-status]').count(), 200);
	const st = await page.locator('#edit-run-status').getAttribute(
	    'data-status');
	const cls = async (id) => page.locator(sel(id)).getAttribute('class');
	const seen = await page.locator('#edit-run-nodes > li').evaluateAll(
	    (l) => l.map((x) => x.dataset.node + ':' + x.dataset.status));
	ok(st === 'partial-succeeded' && /st-succeeded/.test(await cls(tpl)) &&
	    /st-succeeded/.test(await cls(lo)) &&
	    /st-exception/.test(await cls(http)) &&
	    /st-succeeded/.test(await cls(end)) &&
	    seen.filter((x) => x === tpl + ':succeeded').length === 3,
	    'Run runs the draft: the nodes are coloured by their events, ' +
	    'the template once a word, the HTTP request an exception',
	    [st, seen]);
	const outs = JSON.parse(await page.locator('#edit-run-outputs')
	    .textContent());
	const tin = await page.locator('#edit-run-nodes > li[data-node="' +
	    tpl + '"] .n-inputs').first().textContent();
	ok(JSON.stringify(outs.first) === '["<x>","<y>"]' &&
	    /"w": "x"/.test(tin), 'the run panel shows the outputs, and ' +
	    'each node\'s inputs', [outs, tin]);
	await shot(page, 'editor-run');
	const dr = await draftOf(app);
	const tn = dr.graph.nodes.find((n) => n.id === tpl);
	const itn = dr.graph.nodes.find((n) => n.id === it);
	const inner = dr.graph.edges.find((e) => e.target === tpl);
	ok(tn.parentId === it && tn.data.isInIteration === true &&
	    tn.data.iteration_id === it && inner.source === it + 'start' &&
	    inner.data.isInIteration === true &&
	    JSON.stringify(itn.data.iterator_selector) === JSON.stringify(
	    [split, 'result']) && JSON.stringify(itn.data.output_selector) ===
	    JSON.stringify([tpl, 'output']) && itn.data.start_node_id ===
	    it + 'start', 'the template is inside the iteration, after its ' +
	    'start node; the iteration reads the list and collects the ' +
	    'template\'s output', [tn, inner, itn.data]);
	ok(/Published/.test(await publish(page)), 'it publishes');
	const key = await keyOf(app);
	const r = await service(key, 'workflows/run', { inputs: { q: 'a b c' },
	    response_mode: 'blocking', user: 'e2e' });
	/* a failure handled by a fail branch: Dify's partial-succeeded */
	ok(r.status === 200 && r.json.data.status === 'partial-succeeded' &&
	    JSON.stringify(r.json.data.outputs.first) === '["<a>","<b>"]' &&
	    typeof r.json.data.outputs.why === 'string' &&
	    r.json.data.outputs.why === 'HttpRequestNodeError', 'it runs ' +
	    '(partial-succeeded): each word through the template, the first ' +
	    'two kept, the HTTP request\'s failure down its fail branch',
	    r.json);
}

async function main() {
	const profile = fs.mkdtempSync(path.join(OUT, 'chromium-profile-'));
	const ctx = await chromium.launchPersistentContext(profile, {
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		viewport: { width: 1600, height: 1000 },
		args: ['--headless', '--no-sandbox', '--disable-gpu',
		    '--disable-quic', '--no-first-run',
		    '--disable-background-networking',
		    '--disable-component-update', '--disable-sync'],
	});
	ctx.setDefaultTimeout(8000);
	const page = ctx.pages()[0] || await ctx.newPage();
	const problems = [];
	page.on('pageerror', (e) => problems.push('pageerror: ' + e.message));
	page.on('console', (m) => {
		if (m.type() === 'error')
			problems.push('console: ' + m.text());
	});
	try {
		await page.goto(URL_);
		await page.locator('#token').fill(TOKEN);
		await page.keyboard.press('Enter');
		await page.locator('#apps-list').waitFor();
		for (const [name, fn] of [['templates', templates],
		    ['panels', panels], ['iteration', iteration]]) {
			try {
				await fn(page);
			} catch (e) {
				ok(false, name + ' ran to its end');
				console.log('# ' + String(e && e.stack || e)
				    .split('\n').join('\n# '));
				await shot(page, 'failed-' + name).catch(() => {});
			}
		}
	} finally {
		ok(problems.length === 0, 'no script errors and no CSP ' +
		    'violations in the console', problems);
		await ctx.close();
	}
}

main().then(() => {
	console.log('# editor-more checks done, ' + failed + ' failed');
	process.exit(failed ? 1 : 0);
}, (e) => {
	console.log('not ok - the editor-more test ran to its end');
	console.log('# ' + String(e && e.stack || e).split('\n').join('\n# '));
	process.exit(1);
});
