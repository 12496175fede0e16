#!/usr/bin/env node
/*
 * editor.test.js — the admin page's graph editor (the Edit tab) in a real
 * browser: Debian's chromium, headless, driven by playwright-core. Prints
 * TAP lines ("ok - ...", "not ok - ...", "# ..."); tests/e2e/t_admin_editor.sh
 * starts flowcgi (with the fake LLM as its model provider) and nginx, then
 * runs this with ADMIN_URL, ADMIN_TOKEN, CHROMIUM and OUT_DIR (where the
 * profile and the screenshots go).
 *
 * From a blank workflow app it builds start -> llm -> if-else -> two
 * templates -> variable aggregator -> end with the palette, edges dragged
 * between handles (the if-else's IF and ELSE), fields set in each node's
 * panel with the variable picker; checks undo/redo, disconnecting by
 * dragging, deleting, the autosaved draft; publishes, runs the app through
 * /v1/workflows/run with an API key down each branch; then a second tab's
 * save makes the first one's hash stale, which it says.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { chromium } = require('playwright-core');

const URL_ = process.env.ADMIN_URL;
const TOKEN = process.env.ADMIN_TOKEN;
const OUT = process.env.OUT_DIR || fs.mkdtempSync('/tmp/editor-browser-');
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
function note(s) {
	console.log('# ' + s);
}
async function shot(page, name) {
	const f = path.join(OUT, name + '.png');
	await page.screenshot({ path: f, fullPage: true });
	ok(fs.statSync(f).size > 1000, 'screenshot ' + name + '.png');
}

/* The console API with the admin token, from the test itself. */
async function consoleApi(method, p, body) {
	const res = await fetch(PREFIX + 'console/api/' + p, { method,
	    headers: { Authorization: 'Bearer ' + TOKEN,
		'Content-Type': 'application/json' },
	    body: body === undefined ? undefined : JSON.stringify(body) });
	const text = await res.text();
	let json = null;
	try {
		json = JSON.parse(text);
	} catch (e) { /* not JSON */ }
	return { status: res.status, json, text };
}

/* Polls fn until it returns a truthy value (at most n tries); returns it. */
async function until(page, fn, n) {
	for (let i = 0; i < (n || 100); i++) {
		const v = await fn();
		if (v)
			return v;
		await page.waitForTimeout(50);
	}
	return fn();
}

const sel = (id) => '.gnode[data-id="' + id + '"]';

/* Adds a node of type t from the palette; returns its id (it is selected). */
async function add(page, t) {
	const before = await page.locator('#editor .gnode').count();
	await page.locator('.pal[data-type="' + t + '"]').click();
	await page.locator('#editor .gnode').nth(before).waitFor();
	return page.locator('#editor .gnode.selected').getAttribute('data-id');
}

/* Drags from node a's source handle h onto node b. */
async function connect(page, a, h, b) {
	const hb = await page.locator(sel(a) + ' .h-source[data-handle="' + h +
	    '"]').boundingBox();
	const tb = await page.locator(sel(b) + ' .gbox').boundingBox();
	await page.mouse.move(hb.x + hb.width / 2, hb.y + hb.height / 2);
	await page.mouse.down();
	await page.mouse.move(tb.x + tb.width / 2, tb.y + tb.height / 2,
	    { steps: 6 });
	await page.mouse.up();
}

const edgeCount = (page) => page.locator('#editor .gedge').count();

/* Selects node id and waits for its panel. */
async function open(page, id) {
	await page.locator(sel(id) + ' .gtitle').click();
	await page.locator('#edit-panel .node-config').waitFor();
}

/* Fills a panel field and commits it (a change event, as on leaving it). */
async function commit(loc, value) {
	await loc.fill(value);
	await loc.dispatchEvent('change');
}

/* Waits for the autosave to settle; returns the state's text. */
async function saved(page) {
	return until(page, async () => {
		const s = await page.locator('#edit-state').textContent();
		return /^Draft saved|^Not saved/.test(s) ? s : null;
	});
}

async function run(page) {
	await page.goto(URL_);
	await page.locator('#token').fill(TOKEN);
	await page.keyboard.press('Enter');
	await page.locator('#apps-list').waitFor();

	/* a blank workflow app */
	const c = await consoleApi('POST', 'apps', { name: 'Editor e2e',
	    mode: 'workflow' });
	ok(c.status === 201, 'a blank workflow app is created', c.text);
	const app = c.json.id;
	await page.goto(URL_ + '#/app/' + app + '/edit');
	await page.locator('#editor').waitFor();
	ok(await page.locator('#editor .gnode').count() === 0 &&
	    await page.locator('#palette .pal').count() >= 8,
	    'the Edit tab of a blank app: no node, a palette of node types');
	await shot(page, 'editor-blank');

	/* a phone views, it does not edit */
	await page.setViewportSize({ width: 390, height: 800 });
	ok(await page.locator('#editor .phone-note').isVisible() &&
	    !await page.locator('#palette').isVisible(), 'at phone width the ' +
	    'Edit tab says editing needs a wider screen, no palette');
	await shot(page, 'editor-phone');
	await page.setViewportSize({ width: 1600, height: 1000 });
	ok(!await page.locator('#editor .phone-note').isVisible() &&
	    await page.locator('#palette').isVisible(), 'on a laptop screen ' +
	    'the palette, no note');

	/* ---- the nodes, from the palette ---- */
	const id = {};
	id.start = await add(page, 'start');
	id.llm = await add(page, 'llm');
	id.ifelse = await add(page, 'if-else');
	id.yes = await add(page, 'template-transform');
	await open(page, id.ifelse);
	id.no = await add(page, 'template-transform');
	await open(page, id.yes);
	id.agg = await add(page, 'variable-aggregator');
	id.end = await add(page, 'end');
	ok(await page.locator('#editor .gnode').count() === 7 &&
	    new Set(Object.values(id)).size === 7,
	    'seven nodes added from the palette', id);
	ok(await page.locator(sel(id.ifelse) + ' .h-source').count() === 2 &&
	    (await page.locator(sel(id.ifelse) + ' .hlabel').allTextContents())
	    .join(',') === 'IF,ELSE', 'the if-else has two source handles, ' +
	    'IF and ELSE');
	ok(await page.locator(sel(id.start) + ' .h-target').count() === 0 &&
	    await page.locator(sel(id.end) + ' .h-source').count() === 0,
	    'a start has no target handle, an end no source handle');

	const checks = () => page.locator('#edit-checks li').allTextContents();
	const c0 = await checks();
	ok(c0.includes('LLM: not connected to the Start node.') &&
	    c0.includes('End: not connected to the Start node.') &&
	    await page.locator('#editor .gnode.warn').count() === 6,
	    'the checklist flags the six nodes the start does not reach, ' +
	    'and marks them', c0);
	await page.locator('#edit-publish').click();
	ok(/fix the checklist first/.test(await page.locator('#flash')
	    .textContent()) && await page.locator('#edit-checklist')
	    .getAttribute('open') !== null, 'Publish with problems left ' +
	    'refuses and opens the checklist');

	/* ---- edges, dragged between handles ---- */
	await connect(page, id.start, 'source', id.llm);
	await connect(page, id.llm, 'source', id.ifelse);
	await connect(page, id.ifelse, 'true', id.yes);
	await connect(page, id.ifelse, 'false', id.no);
	await connect(page, id.yes, 'source', id.agg);
	await connect(page, id.no, 'source', id.agg);
	await connect(page, id.agg, 'source', id.end);
	ok(await edgeCount(page) === 7, 'seven edges dragged between handles',
	    await edgeCount(page));
	await connect(page, id.end, 'source', id.start).catch(() => null);
	await connect(page, id.agg, 'source', id.llm);
	ok(await edgeCount(page) === 7 && /loop back/.test(await page
	    .locator('#flash').textContent()), 'an edge back upstream (a ' +
	    'cycle) is refused, saying why');

	/* undo and redo of an edge; disconnecting by dragging its end away */
	await page.locator('#edit-undo').click();
	ok(await edgeCount(page) === 6, 'Undo takes the last edge back');
	await page.locator('#edit-redo').click();
	ok(await edgeCount(page) === 7, 'Redo puts it again');
	const tb = await page.locator(sel(id.end) + ' .h-target').boundingBox();
	const wrap = await page.locator('#editor .graph-wrap').boundingBox();
	await page.mouse.move(tb.x + tb.width / 2, tb.y + tb.height / 2);
	await page.mouse.down();
	await page.mouse.move(wrap.x + 20, wrap.y + wrap.height - 20,
	    { steps: 6 });
	await page.mouse.up();
	ok(await edgeCount(page) === 6 && await page.locator('.gedge[data-target' +
	    '="' + id.end + '"]').count() === 0, 'dragging the end of an ' +
	    'edge off its target disconnects it');
	await page.locator('#editor svg.edit-svg').focus();
	await page.keyboard.press('Control+z');
	ok(await edgeCount(page) === 7, 'Ctrl+Z undoes the disconnect');

	/* delete a node: its edges go with it; undo brings both back */
	const extra = await add(page, 'code');
	/* connected by keyboard: the aggregator's panel, handle and target
	 * chosen from lists, Enter on Connect */
	await open(page, id.agg);
	await page.locator('#edit-panel .c-handle').selectOption('source');
	await page.locator('#edit-panel .c-target').selectOption(extra);
	await page.locator('#edit-panel .c-go').focus();
	await page.keyboard.press('Enter');
	ok(await edgeCount(page) === 8 && await page.locator('.gedge[data-' +
	    'source="' + id.agg + '"][data-target="' + extra + '"]')
	    .count() === 1, 'a code node connected after the aggregator by ' +
	    'keyboard (the panel\'s Connect)');
	await open(page, extra);
	await shot(page, 'panel-code');
	await page.locator('#edit-delete').click();
	ok(await page.locator(sel(extra)).count() === 0 &&
	    await edgeCount(page) === 7, 'Delete removes the selected node ' +
	    'and its edge');

	/* ---- each node's panel ---- */
	await open(page, id.start);
	await page.locator('#edit-panel .s-add').click();
	await commit(page.locator('#edit-panel .s-name').first(), 'query');

	await open(page, id.llm);
	const vq = JSON.stringify([id.start, 'query']);
	ok(await page.locator('#edit-panel .prompt-user-insert option[value=\'' +
	    vq + '\']').count() === 1, 'the LLM\'s variable picker lists ' +
	    'the start input query upstream');
	await commit(page.locator('#edit-panel .m-provider'),
	    'langgenius/openai/openai');
	await commit(page.locator('#edit-panel .m-name'), 'gpt-4o-mini');
	await commit(page.locator('#edit-panel textarea.prompt-system'),
	    'Repeat the question.');
	await page.locator('#edit-panel .prompt-user-insert').selectOption(vq);
	ok(await page.locator('#edit-panel textarea.prompt-user').inputValue() ===
	    '{{#' + id.start + '.query#}}', 'picking a variable inserts ' +
	    '{{#node.var#}} into the prompt');
	await shot(page, 'panel-llm');

	await open(page, id.ifelse);
	await page.locator('#edit-panel .k-add').click();
	const vt = JSON.stringify([id.llm, 'text']);
	await page.locator('#edit-panel .k-var').selectOption(vt);
	await page.locator('#edit-panel .k-op').selectOption('contains');
	await commit(page.locator('#edit-panel .k-value'), 'hello');
	ok(await page.locator('#edit-panel .k-op option').count() >= 6,
	    'the condition offers the string operators of the LLM\'s text');
	await shot(page, 'panel-if-else');

	for (const [k, word] of [['yes', 'yes'], ['no', 'no']]) {
		await open(page, id[k]);
		await page.locator('#edit-panel .inputs .r-add').click();
		await page.locator('#edit-panel .inputs .r-sel').selectOption(vt);
		ok(await page.locator('#edit-panel .inputs .r-name').inputValue() ===
		    'text', 'an input picked is named after its variable (' + k +
		    ')');
		await commit(page.locator('#edit-panel textarea.template'),
		    word + ': {{ text }}');
	}
	await shot(page, 'panel-template');

	await open(page, id.agg);
	for (const k of ['yes', 'no']) {
		await page.locator('#edit-panel .agg-add').click();
		await page.locator('#edit-panel .agg-var').last().selectOption(
		    JSON.stringify([id[k], 'output']));
	}
	await shot(page, 'panel-aggregator');

	await open(page, id.end);
	await page.locator('#edit-panel .end-outputs .r-add').click();
	await page.locator('#edit-panel .end-outputs .r-sel').selectOption(
	    JSON.stringify([id.agg, 'output']));
	await commit(page.locator('#edit-panel .end-outputs .r-name'), 'result');
	await shot(page, 'panel-end');

	/* copy and paste a node by keyboard; Delete takes the copy away */
	await open(page, id.yes);
	await page.locator('#editor svg.edit-svg').focus();
	await page.keyboard.press('Control+c');
	await page.keyboard.press('Control+v');
	const pasted = await page.locator('#editor .gnode.selected')
	    .getAttribute('data-id');
	ok(await page.locator('#editor .gnode').count() === 8 &&
	    pasted !== id.yes && await page.locator('#edit-panel ' +
	    'textarea.template').inputValue() === 'yes: {{ text }}',
	    'Ctrl+C, Ctrl+V pastes a copy of the template with its fields');
	await page.keyboard.press('Delete');
	ok(await page.locator('#editor .gnode').count() === 7 &&
	    await page.locator(sel(pasted)).count() === 0, 'the Delete key ' +
	    'removes the selected copy');

	/* ---- the autosaved draft ---- */
	ok(/^Draft saved/.test(await saved(page)), 'the changes are saved to ' +
	    'the draft', await page.locator('#edit-state').textContent());
	const dr = await consoleApi('GET', 'apps/' + app + '/workflows/draft');
	const g = dr.json.graph;
	const endN = g.nodes.find((n) => n.id === id.end);
	const ifN = g.nodes.find((n) => n.id === id.ifelse);
	ok(g.nodes.length === 7 && g.edges.length === 7 &&
	    g.edges.some((e) => e.source === id.ifelse && e.sourceHandle ===
	    'false' && e.target === id.no), 'the draft holds the seven nodes ' +
	    'and edges, ELSE to the second template', g.edges.map((e) =>
	    e.source + ':' + e.sourceHandle + '>' + e.target));
	ok(JSON.stringify(endN.data.outputs) === JSON.stringify([{
	    variable: 'result', value_selector: [id.agg, 'output'] }]) &&
	    ifN.data.cases[0].conditions[0].comparison_operator === 'contains',
	    'the panels\' fields are in the draft', [endN.data, ifN.data]);
	ok((await checks()).length === 0 && await page.locator(
	    '#editor .gnode.warn').count() === 0, 'the checklist of the ' +
	    'built workflow is empty', await checks());
	await shot(page, 'editor-built');

	/* ---- publish, then run through the service API ---- */
	/* undo three steps and redo them: the draft is the same again */
	await page.locator('#editor svg.edit-svg').focus();
	for (let i = 0; i < 3; i++)
		await page.keyboard.press('Control+z');
	ok(/^Draft saved/.test(await saved(page)), 'three undos are saved');
	const mid = await consoleApi('GET', 'apps/' + app + '/workflows/draft');
	for (let i = 0; i < 3; i++)
		await page.keyboard.press('Control+Shift+z');
	await saved(page);
	const back = await consoleApi('GET', 'apps/' + app + '/workflows/draft');
	ok(JSON.stringify(mid.json.graph) !== JSON.stringify(dr.json.graph) &&
	    JSON.stringify(back.json.graph) === JSON.stringify(dr.json.graph),
	    'undo changes the saved draft; redo of each step gives it back ' +
	    'byte for byte');
	await page.locator('#edit-version-name').fill('first build');
	await page.locator('#edit-publish').click();
	await until(page, async () => /Published/.test(await page
	    .locator('#flash').textContent()));
	ok(/Published/.test(await page.locator('#flash').textContent()),
	    'Publish publishes the draft', await page.locator('#flash')
	    .textContent());
	const vs = await consoleApi('GET', 'apps/' + app + '/workflows?limit=5');
	ok(vs.json && vs.json.items && vs.json.items.length === 1 &&
	    vs.json.items[0].marked_name === 'first build',
	    'the version carries its name', vs.json);
	const key = await consoleApi('POST', 'apps/' + app + '/api-keys');
	ok(key.status === 200 || key.status === 201, 'an API key', key.text);
	for (const [q, want] of [['hello there', 'yes: echo: hello there'],
	    ['bye', 'no: echo: bye']]) {
		const res = await fetch(PREFIX + 'v1/workflows/run', {
		    method: 'POST', headers: { Authorization: 'Bearer ' +
			key.json.token, 'Content-Type': 'application/json' },
		    body: JSON.stringify({ inputs: { query: q },
			response_mode: 'blocking', user: 'e2e' }) });
		const j = await res.json().catch(() => null);
		ok(res.status === 200 && j && j.data && j.data.status ===
		    'succeeded' && j.data.outputs.result === want,
		    '/v1/workflows/run with "' + q + '" gives "' + want + '"', j);
	}

	/* ---- two tabs: the second saves, the first's hash is stale ---- */
	const other = await page.context().newPage();
	await other.goto(URL_ + '#/app/' + app + '/edit');
	/* sessionStorage is a tab's own: the second tab signs in too */
	await other.locator('#token').fill(TOKEN);
	await other.keyboard.press('Enter');
	await other.locator('#editor .gnode').first().waitFor();
	await other.locator('.pal[data-type="answer"]').click();
	ok(/^Draft saved/.test(await saved(other)), 'a second tab saves a ' +
	    'change');
	await page.locator('.pal[data-type="code"]').click();
	await until(page, async () => page.locator('#edit-reload').count());
	ok(await page.locator('#edit-reload').count() === 1 &&
	    /another tab/.test(await page.locator('#flash').textContent()),
	    'the first tab\'s next save says the draft changed in another ' +
	    'tab and offers a reload');
	await shot(page, 'editor-stale');
	await page.locator('#edit-reload').click();
	await page.locator('#editor .gnode').first().waitFor();
	ok(await page.locator('#editor .gnode').count() === 8,
	    'the reload shows the other tab\'s draft (eight nodes)');
	await other.close();
}

/*
 * A real Dify export (ROUNDTRIP): imported, its if-else condition's value
 * and a code node's code changed in the editor, published; the exports
 * before and after are written to OUT_DIR (export-before.yml,
 * export-after.yml) for t_admin_editor.sh to compare.
 */
async function roundTrip(page) {
	const yml = fs.readFileSync(process.env.ROUNDTRIP, 'utf8');
	const imp = await consoleApi('POST', 'apps/imports', {
	    mode: 'yaml-content', yaml_content: yml });
	const app = imp.json && imp.json.app_id;
	ok(!!app, 'a real Dify export is imported', imp.text);
	const before = await consoleApi('GET', 'apps/' + app + '/export');
	await page.goto(URL_ + '#/app/' + app + '/edit');
	await page.locator('#editor .gnode').first().waitFor();
	const ifId = '1754230718377', codeId = '1754230738434';
	ok(await page.locator('#editor .gnode').count() === 6 &&
	    await edgeCount(page) === 8, 'the editor shows its six nodes ' +
	    'and eight edges');
	await open(page, ifId);
	ok(await page.locator('#edit-panel .k-value').inputValue() === '1' &&
	    await page.locator('#edit-panel .k-op').inputValue() === '=',
	    'the if-else panel shows its condition (switch = 1)');
	await commit(page.locator('#edit-panel .k-value'), '2');
	await open(page, codeId);
	await commit(page.locator('#edit-panel textarea.code'),
	    'def main() -> dict:\n    return {"result": "Code one"}\n');
	ok(/^Draft saved/.test(await saved(page)), 'the two changes are saved');
	await page.locator('#edit-publish').click();
	await until(page, async () => /Published/.test(await page
	    .locator('#flash').textContent()));
	ok(/Published/.test(await page.locator('#flash').textContent()),
	    'the changed export is published', [await page.locator('#flash')
	    .textContent(), await page.locator('#edit-checks li')
	    .allTextContents()]);
	const after = await consoleApi('GET', 'apps/' + app + '/export');
	ok(before.status === 200 && after.status === 200 &&
	    typeof before.json.data === 'string' &&
	    typeof after.json.data === 'string', 'both exports answer 200 ' +
	    'with the DSL', [before.status, after.status]);
	fs.writeFileSync(path.join(OUT, 'export-before.yml'),
	    before.json.data || '');
	fs.writeFileSync(path.join(OUT, 'export-after.yml'),
	    after.json.data || '');
	await shot(page, 'editor-roundtrip');
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
	const watch = (p) => {
		p.on('pageerror', (e) => problems.push('pageerror: ' +
		    e.message));
		/* 409: the stale draft saved on purpose */
		p.on('console', (m) => {
			if (m.type() === 'error' && !/409/.test(m.text()))
				problems.push('console: ' + m.text());
		});
	};
	watch(page);
	ctx.on('page', watch);
	try {
		await run(page);
		await roundTrip(page);
	} finally {
		ok(problems.length === 0, 'no script errors and no CSP ' +
		    'violations in the console', problems);
		await ctx.close();
	}
}

main().then(() => {
	console.log('# editor checks done, ' + failed + ' failed');
	process.exit(failed ? 1 : 0);
}, (e) => {
	console.log('not ok - the editor test ran to its end');
	console.log('# ' + String(e && e.stack || e).split('\n').join('\n# '));
	process.exit(1);
});
