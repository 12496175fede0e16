#!/usr/bin/env node
/*
 * admin.test.js — the flowcgi admin page in a real browser: Debian's
 * chromium, headless, driven by playwright-core. Prints TAP lines
 * ("ok - ...", "not ok - ...", "# ..."); tests/e2e/t_admin_browser.sh
 * starts flowcgi and nginx, then runs this with:
 *   ADMIN_URL    the page, e.g. http://127.0.0.1:PORT/flow/admin/
 *   ADMIN_TOKEN  the admin token
 *   CHROMIUM     the browser binary (/usr/bin/chromium)
 *   CORPUS       the DSL corpus folder; FIXTURES this folder's fixtures/
 *   OUT_DIR      where downloads, the profile and screenshots go
 *   LLM          the fake LLM (tests/fakes/fake_llm.py) flowcgi calls
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { chromium } = require('playwright-core');

const URL_ = process.env.ADMIN_URL;
const TOKEN = process.env.ADMIN_TOKEN;
const OUT = process.env.OUT_DIR || fs.mkdtempSync('/tmp/admin-browser-');
const CORPUS = process.env.CORPUS;
const FIXTURES = process.env.FIXTURES || path.join(__dirname, 'fixtures');
const ORIGIN_PREFIX = new URL('..', URL_).href;	/* http://host/flow/ */

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
/* A full-page screenshot of what is shown, under OUT_DIR. */
async function shot(page, name) {
	const f = path.join(OUT, name + '.png');
	await page.screenshot({ path: f, fullPage: true });
	ok(fs.statSync(f).size > 1000, 'screenshot ' + name + '.png');
	note('screenshot: ' + f);
}
/* The test's sshd (see t_admin_browser.sh). */
const SSH = { port: process.env.SSH_PORT, user: process.env.SSH_USER,
    pass: process.env.SSH_PASS, base: process.env.SSH_BASE };

/* The test's private dockerd when one could start (t_admin_browser.sh). */
const DOCKER = { sock: process.env.DOCKER_SOCK, why: process.env.DOCKER_WHY };

/*
 * Settings > Sandbox Provider, the docker card: its fields, Test connection
 * against a dead socket and, with the test's dockerd, a missing image, the
 * engine found, Save, Activate and Remove.
 */
async function dockerCard(page) {
	const card = () => page.locator('.provider[data-type="docker"]');
	const field = (n) => card().locator('input[name="' + n + '"]');
	const test = async () => {
		await card().locator('.out').evaluate((e) => {
			e.textContent = '';
		});
		await card().getByRole('button', { name: 'Test connection' })
		    .click();
		const m = card().locator('.out .msg');
		await m.waitFor();
		return { error: /\berror\b/.test(await m.getAttribute('class')),
		    text: await m.textContent() };
	};
	/* the card's fields are drawn after the provider list arrives */
	await field('docker_pids').waitFor({ timeout: 10000 }).catch(() => {});
	ok(await card().count() === 1 && await field('docker_sock')
	    .inputValue() === 'unix:///var/run/docker.sock' && await
	    field('docker_image').inputValue() ===
	    'langgenius/dify-agentbox:latest' && await field('docker_network')
	    .count() === 1 && await field('docker_memory').count() === 1 &&
	    await field('docker_cpus').count() === 1 && await
	    field('docker_pids').count() === 1, 'the docker card: Dify\'s ' +
	    'fields with their defaults, and ours (network, limits)');
	await field('docker_sock').fill('unix:///nonexistent/docker.sock');
	let m = await test();
	ok(m.error && /cannot reach the engine at unix:\/\/\/nonexistent\/docker\.sock/
	    .test(m.text), 'docker: Test connection against a dead engine ' +
	    'names it', m.text);
	if (!DOCKER.sock) {
		console.log('skip - docker: ' + (DOCKER.why ||
		    'no private dockerd'));
		return;
	}
	await field('docker_sock').fill(DOCKER.sock);
	await field('docker_image').fill('flowcgi-test/missing:1');
	m = await test();
	ok(m.error && /image 'flowcgi-test\/missing:1' is not on the engine/
	    .test(m.text), 'docker: a missing image is named', m.text);
	await field('docker_image').fill('flowcgi-test/busybox:1');
	m = await test();
	ok(!m.error && /^Docker Engine .*image flowcgi-test\/busybox:1 is present$/
	    .test(m.text), 'docker: Test connection shows the engine\'s ' +
	    'version and the image', m.text);
	await card().getByRole('button', { name: 'Save' }).click();
	await card().locator('.badge.cfg').waitFor();
	ok(await field('docker_image').inputValue() ===
	    'flowcgi-test/busybox:1', 'docker: saved, the card shows it');
	await card().getByRole('button', { name: 'Activate' }).click();
	await card().locator('.badge.active').waitFor();
	ok(await page.locator('.provider[data-type="local"] .badge.active')
	    .count() === 0, 'docker: Activate makes it the active one');
	await shot(page, 'settings-sandbox-docker');
	await page.locator('.provider[data-type="local"]').getByRole('button',
	    { name: 'Activate' }).click();
	await page.locator('.provider[data-type="local"] .badge.active')
	    .waitFor();
	await card().getByRole('button', { name: 'Remove' }).click();
	await page.locator('#dlg[open]').waitFor();
	await page.locator('#dlg-ok').click();
	await card().locator('.badge.cfg').waitFor({ state: 'detached' });
	ok(await card().getByRole('button', { name: 'Remove' }).count() === 0,
	    'docker: Remove, back to local');
}

/* The whole run has 160 s; a hang must not hold the test suite. */
const watchdog = setTimeout(() => {
	console.log('not ok - the browser test finished within 160 s');
	process.exit(1);
}, 160000);

async function main() {
	const profile = fs.mkdtempSync(path.join(OUT, 'chromium-profile-'));
	const ctx = await chromium.launchPersistentContext(profile, {
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		acceptDownloads: true,
		viewport: { width: 1200, height: 900 },
		args: ['--headless', '--no-sandbox', '--disable-gpu',
		    '--disable-quic', '--no-first-run',
		    '--disable-background-networking',
		    '--disable-component-update', '--disable-sync'],
	});
	ctx.setDefaultTimeout(8000);
	const page = ctx.pages()[0] || await ctx.newPage();
	const problems = [];
	const foreign = [];
	page.on('pageerror', (e) => problems.push('pageerror: ' + e.message));
	page.on('console', (m) => {
		/* 400: the wrong ssh password the test saves on purpose;
		 * 409: the stale draft the graph test saves on purpose */
		if (m.type() === 'error' && !/401|404|400|409/.test(m.text()))
			problems.push('console: ' + m.text());
	});
	page.on('request', (r) => {
		if (!r.url().startsWith(ORIGIN_PREFIX) &&
		    !r.url().startsWith('blob:') &&
		    !r.url().startsWith('data:'))
			foreign.push(r.url());
	});
	try {
		await run(page);
	} finally {
		ok(problems.length === 0, 'no script errors and no CSP ' +
		    'violations in the console', problems);
		ok(foreign.length === 0, 'every request stayed under the ' +
		    'mount prefix ' + ORIGIN_PREFIX, foreign);
		await ctx.close();
	}
}

const rows = (page) => page.locator('#apps-table tbody tr');
const row = (page, name) => page.locator('#apps-table tbody tr', {
	has: page.locator('a.app-name', { hasText: new RegExp('^' +
	    name.replace(/[()[\]\\.*+?^$|{}]/g, '\\$&') + '$') }) });
const flash = (page) => page.locator('#flash .msg');

/* A w x h PNG of colour bands (for the output image preview). */
function pngOf(w, h) {
	const zlib = require('node:zlib');
	const crcT = [];
	for (let n = 0; n < 256; n++) {
		let c = n;
		for (let k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
		crcT[n] = c >>> 0;
	}
	const crc = (b) => {
		let c = 0xffffffff;
		for (const x of b)
			c = crcT[(c ^ x) & 0xff] ^ (c >>> 8);
		return (c ^ 0xffffffff) >>> 0;
	};
	const chunk = (t, d) => {
		const len = Buffer.alloc(4), sum = Buffer.alloc(4);
		const td = Buffer.concat([Buffer.from(t), d]);
		len.writeUInt32BE(d.length);
		sum.writeUInt32BE(crc(td));
		return Buffer.concat([len, td, sum]);
	};
	const hdr = Buffer.alloc(13);
	hdr.writeUInt32BE(w, 0);
	hdr.writeUInt32BE(h, 4);
	hdr[8] = 8;
	hdr[9] = 2;	/* RGB */
	const raw = Buffer.alloc((w * 3 + 1) * h);
	for (let y = 0; y < h; y++)
		for (let x = 0; x < w; x++)
			raw.set(x < w / 3 ? [31, 95, 209] : x < 2 * w / 3 ?
			    [6, 118, 71] : [245, 165, 36],
			    y * (w * 3 + 1) + 1 + x * 3);
	return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
	    chunk('IHDR', hdr), chunk('IDAT', zlib.deflateSync(raw)),
	    chunk('IEND', Buffer.alloc(0))]);
}

/*
 * A sandboxed app's run on the Run tab, the fake LLM scripted to run
 * three commands: each shows with its output (a long one collapsed) and
 * exit code, the image it left under output/ shows as a download with a
 * preview, and the workspace tree after the run offers its files; the
 * run's trace shows the commands and the image again.
 */
async function sandboxedRun(page) {
	const png = pngOf(96, 48).toString('base64');
	const call = (id, c) => ({ tool_calls: [{ id, name: 'bash',
	    arguments: { bash: c } }] });
	const script = await fetch(process.env.LLM + '/_script', {
		method: 'POST', headers: { 'Content-Type': 'application/json' },
		body: JSON.stringify({ responses: [
			call('a', 'mkdir -p output && echo ' + png +
			    ' | base64 -d > output/chart.png && echo drawn'),
			call('b', 'seq 1 40'),
			call('c', 'ls nothere'),
			{ text: 'The chart is in output/chart.png.' },
		] }),
	});
	ok(script.ok, 'the fake LLM is scripted');
	await page.goto(URL_ + '#/apps');
	await page.locator('#import-file').setInputFiles(path.join(FIXTURES,
	    'sandboxed_agent.yml'));
	await page.locator('#import-form button[type=submit]').click();
	await row(page, 'sandboxed agent').locator('a.app-name').click();
	await page.locator('#app-title').waitFor();
	await page.getByRole('link', { name: 'Run', exact: true }).click();
	await page.locator('#run-form').waitFor();
	await page.locator('#run-button').click();
	await page.locator('#events li[data-event="workflow_finished"]')
	    .waitFor({ timeout: 30000 });
	await page.locator('#run-workspace h2').waitFor();
	const cmds = page.locator('#run-commands li');
	ok(await cmds.count() === 3, 'the Run tab lists the three commands',
	    await cmds.count());
	const first = await cmds.nth(0).locator('code.command').textContent();
	ok(first.startsWith('$ mkdir -p output && echo iVBOR'),
	    'each command as the Agent ran it', first);
	ok(/drawn/.test(await cmds.nth(0).locator('pre').textContent()) &&
	    await cmds.nth(0).locator('details[open]').count() === 1,
	    'a short output shows open');
	const long = cmds.nth(1).locator('details.output');
	ok(await long.getAttribute('open') === null &&
	    /40 lines|41 lines/.test(await long.locator('summary')
	    .textContent()), 'a long output starts collapsed, its line ' +
	    'count shown', await long.locator('summary').textContent());
	await long.locator('summary').click();
	ok(/^1\n2\n[\s\S]*\n40/.test(await long.locator('pre')
	    .textContent()), 'opened, it shows the whole output');
	const codes = await page.locator('#run-commands li .badge')
	    .allTextContents();
	/* older engines send no exit_code: the status stands in for it */
	ok(/^(exit 0|success)$/.test(codes[0]) && codes[2] === 'exit 2' &&
	    /No such file/.test(
	    await cmds.nth(2).locator('pre').textContent()),
	    'each command shows its exit code and output', codes);
	const file = page.locator('#run-files li');
	ok(await file.count() === 1 && await file.locator('a')
	    .getAttribute('download') === 'chart.png',
	    'the output file is offered as a download');
	const img = file.locator('img.preview');
	await img.waitFor();
	ok(await img.evaluate((i) => i.complete && i.naturalWidth === 96 &&
	    i.naturalHeight === 48), 'with a preview of the image');
	const tree = page.locator('#run-workspace');
	ok(await tree.locator('li[data-path="output"]').count() === 1 &&
	    await tree.locator('li[data-path="output/chart.png"]').count() ===
	    1 && await tree.locator('li[data-path^="skills"]').count() === 0,
	    'the workspace tree after the run (without skills/)',
	    await tree.textContent());
	const [dl] = await Promise.all([page.waitForEvent('download'),
	    tree.getByRole('button', { name: 'Download output/chart.png' })
	    .click()]);
	const got = fs.readFileSync(await dl.path());
	ok(dl.suggestedFilename() === 'chart.png' &&
	    got.equals(Buffer.from(png, 'base64')),
	    'a workspace file downloads with its bytes');
	await shot(page, 'app-run-sandboxed');
	await page.locator('#reset-workspace').click();
	await flash(page).waitFor();
	const app = page.url().match(/#\/app\/([^/]+)/)[1];
	const after = await fetch(ORIGIN_PREFIX + 'console/api/apps/' + app +
	    '/sandbox/files', { headers: { Authorization: 'Bearer ' +
	    TOKEN } });
	ok(after.status === 404 && await page.locator('#run-commands')
	    .count() === 0, 'Reset workspace empties the draft workspace');
	/* the run's trace keeps the commands and files for later */
	await page.getByRole('link', { name: 'Runs' }).click();
	await page.locator('#runs-table tbody tr').first()
	    .getByRole('link', { name: 'Trace' }).click();
	const agent = page.locator('#trace-nodes details.trace',
	    { hasText: 'Agent' });
	await agent.locator(':scope > summary').click();
	const tcodes = await agent.locator('ol.cmds li .badge')
	    .allTextContents();
	ok(tcodes.length === 3 && tcodes[2] === 'exit 2' && /^\$ seq 1 40$/
	    .test(await agent.locator('ol.cmds li code').nth(1)
	    .textContent()), 'the trace of the run lists the commands',
	    tcodes);
	const timg = agent.locator('img.preview');
	await timg.waitFor();
	ok(await timg.evaluate((i) => i.complete && i.naturalWidth === 96),
	    'and previews the output image');
	await shot(page, 'app-trace-sandboxed');
	/* the app list later counts the apps made before this one */
	const del = await fetch(ORIGIN_PREFIX + 'console/api/apps/' + app,
	    { method: 'DELETE', headers: { Authorization: 'Bearer ' +
	    TOKEN } });
	ok(del.ok, 'the sandboxed app is deleted again');
}

/* ---- The graph (graph.js), a run's trace on it, and edits ---- */

const api = async (method, p, body) => {
	const r = await fetch(ORIGIN_PREFIX + 'console/api/' + p, { method,
	    headers: Object.assign({ Authorization: 'Bearer ' + TOKEN },
	    body ? { 'Content-Type': 'application/json' } : {}),
	    body: body ? JSON.stringify(body) : undefined });
	const t = await r.text();
	return t ? JSON.parse(t) : null;
};
const importYaml = (file, name) => api('POST', 'apps/imports', {
	mode: 'yaml-content', yaml_content: fs.readFileSync(file, 'utf8'),
	name });

/*
 * An app of the corpus with an iteration: every node of its DSL drawn,
 * the iteration around its children, the settings of a clicked node; the
 * list at phone width. A finished run's trace colours the nodes it took
 * and shows the others as skipped. Agent Mode turned off and published
 * changes what the next service-API run does (the model sees no tools).
 */
async function graphAndEdits(page) {
	const imp = await importYaml(path.join(CORPUS,
	    'svcvit__Jina_Reader_Jinja.yml'), 'graph of an iteration');
	const d = await api('GET', 'apps/' + imp.app_id + '/workflows/draft');
	const nodes = d.graph.nodes;
	await page.goto(URL_ + '#/app/' + imp.app_id + '/overview');
	await page.locator('#graph svg .gnode').first().waitFor();
	const drawn = await page.locator('#graph svg .gnode').count();
	ok(drawn === nodes.length && nodes.length > 5, 'the graph draws ' +
	    'every node of the DSL (' + nodes.length + ')', drawn);
	const ids = await page.locator('#graph svg .gnode').evaluateAll((gs) =>
	    gs.map((g) => g.getAttribute('data-id')).sort());
	ok(JSON.stringify(ids) === JSON.stringify(nodes.map((n) => n.id)
	    .sort()), 'one SVG node for each DSL node id');
	ok(await page.locator('#graph svg .gedge').count() ===
	    d.graph.edges.length, 'and one curve for each edge',
	    await page.locator('#graph svg .gedge').count());
	const it = nodes.find((n) => n.data.type === 'iteration');
	const kids = nodes.filter((n) => n.parentId === it.id);
	const inside = await page.evaluate(([itId, kidIds]) => {
		const r = (id) => document.querySelector('#graph .gnode' +
		    '[data-id="' + id + '"] > .gbox').getBoundingClientRect();
		const o = r(itId);
		return kidIds.every((k) => {
			const c = r(k);
			return c.left >= o.left - 1 && c.right <= o.right + 1 &&
			    c.top >= o.top - 1 && c.bottom <= o.bottom + 1;
		});
	}, [it.id, kids.map((k) => k.id)]);
	ok(kids.length > 1 && inside, 'the iteration is drawn around its ' +
	    kids.length + ' children');
	const llm = nodes.find((n) => n.data.type === 'llm');
	await page.locator('#graph .gnode[data-id="' + llm.id + '"]').click();
	await page.locator('#node-panel h3').waitFor();
	ok((await page.locator('#node-panel h3').textContent())
	    .includes(llm.data.title) && /prompt_template/.test(await page
	    .locator('#node-panel details.settings pre').textContent()),
	    'a clicked node shows its settings');
	await shot(page, 'graph-desktop');
	/* a title, a start input and a secret variable, saved as a draft */
	await page.locator('#node-panel input[name=title]').fill('Summarise');
	await page.locator('#node-apply').click();
	ok(await page.locator('#graph .gnode[data-id="' + llm.id +
	    '"] .gtitle').textContent() === 'Summarise',
	    'an applied title shows on the graph at once');
	const start = nodes.find((n) => n.data.type === 'start');
	await page.locator('#graph .gnode[data-id="' + start.id + '"]')
	    .click();
	await page.locator('#add-input').click();
	await page.locator('#start-vars tbody tr').last().locator('.v-name')
	    .fill('lang');
	await page.locator('#node-apply').click();
	await page.locator('#env-edit summary').click();
	await page.getByRole('button', { name: 'Add variable' }).click();
	const er = page.locator('#env-vars tbody tr').last();
	await er.locator('.e-name').fill('api_token');
	await er.locator('.e-type').selectOption('secret');
	await er.locator('.e-value').fill('GRAPHSEC-51a2');
	await page.getByRole('button', { name: 'Apply variables' }).click();
	await page.locator('#save-draft').click();
	await page.locator('#draft-state', { hasText: 'Draft saved' })
	    .waitFor();
	let dd = await api('GET', 'apps/' + imp.app_id + '/workflows/draft');
	const dn = (id) => dd.graph.nodes.find((n) => n.id === id);
	ok(dn(llm.id).data.title === 'Summarise' && dn(start.id).data
	    .variables.some((v) => v.variable === 'lang') &&
	    dd.environment_variables.some((v) => v.name === 'api_token' &&
	    v.value === '[__HIDDEN__]'), 'Save draft keeps the title, the ' +
	    'new input and the secret (masked in answers)');
	/* the page again: the secret comes back masked and stays */
	await page.reload();
	await page.locator('#graph svg .gnode').first().waitFor();
	await page.locator('#graph .gnode[data-id="' + llm.id + '"]').click();
	await page.locator('#node-panel input[name=title]').fill('Summary');
	await page.locator('#node-apply').click();
	await page.locator('#save-draft').click();
	await page.locator('#draft-state', { hasText: 'Draft saved' })
	    .waitFor();
	const ex0 = await api('GET', 'apps/' + imp.app_id +
	    '/export?include_secret=true');
	ok(/GRAPHSEC-51a2/.test(ex0.data) && /Summary/.test(ex0.data),
	    'a secret sent back masked keeps its value');
	dd = await api('GET', 'apps/' + imp.app_id + '/workflows/draft');
	const other = await api('POST', 'apps/' + imp.app_id +
	    '/workflows/draft', { graph: dd.graph, features: dd.features,
	    environment_variables: dd.environment_variables, hash: dd.hash });
	ok(other && other.result === 'success', 'another editor saves');
	await page.locator('#graph .gnode[data-id="' + llm.id + '"]').click();
	await page.locator('#node-apply').click();
	await page.locator('#save-draft').click();
	await flash(page).filter({ hasText: 'changed elsewhere' }).waitFor();
	ok(true, 'a save over a draft changed elsewhere says so');
	const z0 = await page.locator('#graph svg g.viewport')
	    .getAttribute('transform');
	await page.getByRole('button', { name: 'Zoom in' }).click();
	ok(z0 !== await page.locator('#graph svg g.viewport')
	    .getAttribute('transform'), 'the zoom buttons zoom');
	await page.setViewportSize({ width: 390, height: 844 });
	ok(!await page.locator('#graph svg.graph-svg').isVisible() && await page
	    .locator('#graph .graph-list').isVisible() && await page
	    .locator('#graph .graph-list li').count() === nodes.filter((n) =>
	    n.type !== 'custom-note').length, 'at phone width, a vertical ' +
	    'list of the nodes instead');
	await shot(page, 'graph-phone');
	await page.setViewportSize({ width: 1200, height: 900 });

	/* a finished run's trace */
	const br = await importYaml(path.join(CORPUS,
	    'difytest__conditional_hello_branching_workflow.yml'),
	    'branching graph');
	const sse = await (await fetch(ORIGIN_PREFIX + 'console/api/apps/' +
	    br.app_id + '/workflows/draft/run', { method: 'POST', headers: {
	    Authorization: 'Bearer ' + TOKEN, 'Content-Type':
	    'application/json' }, body: JSON.stringify({ inputs:
	    { query: 'hello' } }) })).text();
	const runId = JSON.parse(sse.split('\n').find((l) =>
	    l.startsWith('data: ')).slice(6)).workflow_run_id;
	const ex = await api('GET', 'apps/' + br.app_id + '/workflow-runs/' +
	    runId + '/node-executions');
	const taken = new Set(ex.data.map((x) => x.node_id));
	await page.goto(URL_ + '#/app/' + br.app_id + '/runs/' + runId);
	await page.locator('#trace-graph svg .gnode').first().waitFor();
	const tg = page.locator('#trace-graph svg');
	const okIds = await tg.locator('.gnode.st-succeeded').evaluateAll(
	    (gs) => gs.map((g) => g.getAttribute('data-id')).sort());
	ok(okIds.length === taken.size && okIds.every((i) => taken.has(i)),
	    'the trace colours each node the run took (' + taken.size + ')',
	    okIds);
	const total = await tg.locator('.gnode').count();
	ok(await tg.locator('.gnode.st-skipped').count() === total -
	    taken.size && total > taken.size, 'the others show as skipped');
	ok(/\d\.\d{3} s/.test(await tg.locator('.gnode.st-succeeded .gstat')
	    .first().textContent()), 'a taken node shows its time');
	await tg.locator('.gnode.st-succeeded').last().click();
	await page.locator('#trace-node pre.x-outputs').first().waitFor();
	ok(await page.locator('#trace-node pre.x-inputs').count() >= 1,
	    'a node of the trace shows its inputs and outputs');
	await shot(page, 'graph-trace');
	await page.setViewportSize({ width: 390, height: 844 });
	ok(await page.locator('#trace-graph .graph-list li.st-succeeded')
	    .count() === taken.size, 'the trace colours the phone list too');
	await shot(page, 'graph-trace-phone');
	await page.setViewportSize({ width: 1200, height: 900 });

	/* Agent Mode off, published: the next service-API run has no tools */
	const ag = await importYaml(path.join(FIXTURES,
	    'sandboxed_agent.yml'), 'agent mode');
	const key = (await api('POST', 'apps/' + ag.app_id + '/api-keys'))
	    .token;
	const llmScript = (text) => fetch(process.env.LLM + '/_script', {
		method: 'POST', headers: { 'Content-Type': 'application/json' },
		body: JSON.stringify({ responses: [{ text }] }) });
	const serviceRun = async () => {
		const r = await fetch(ORIGIN_PREFIX + 'v1/workflows/run', {
			method: 'POST', headers: { Authorization: 'Bearer ' +
			key, 'Content-Type': 'application/json' },
			body: JSON.stringify({ inputs: {}, user: 'u',
			response_mode: 'blocking' }) });
		const j = await r.json();
		const reqs = await (await fetch(process.env.LLM +
		    '/_requests')).json();
		const chat = reqs.filter((q) => q.body && q.body.messages);
		const last = chat[chat.length - 1];
		return { text: j.data && j.data.outputs && j.data.outputs.text,
		    tools: last && last.body.tools ? last.body.tools.length :
		    0 };
	};
	await llmScript('with the sandbox');
	const before = await serviceRun();
	ok(before.text === 'with the sandbox' && before.tools > 0,
	    'with Agent Mode on, the model is offered tools', before);
	await page.goto(URL_ + '#/app/' + ag.app_id + '/overview');
	await page.locator('#graph .gnode[data-id="agent"]').click();
	const mode = page.locator('#agent-mode');
	ok(await mode.isChecked(), 'the Agent node shows Agent Mode on');
	await mode.uncheck();
	await page.locator('#node-apply').click();
	ok(/Unsaved/.test(await page.locator('#draft-state').textContent()),
	    'the change waits to be saved');
	await page.locator('#publish').click();
	await page.locator('#draft-state', { hasText: 'Published' })
	    .waitFor();
	const pub = await api('GET', 'apps/' + ag.app_id +
	    '/workflows/publish');
	ok(pub.graph.nodes.find((n) => n.id === 'agent').data
	    .computer_use === false, 'Publish saved the draft and published ' +
	    'it');
	await llmScript('plain answer');
	const after = await serviceRun();
	ok(after.text === 'plain answer' && after.tools === 0,
	    'the next service-API run calls the model without tools', after);
	await shot(page, 'graph-edit');
	/* the version from the import restored into the draft */
	await page.locator('#versions-box summary').click();
	const vs = page.locator('#versions li');
	await vs.nth(1).waitFor();
	ok(await vs.count() === 2, 'the two published versions are listed',
	    await vs.count());
	await vs.nth(1).getByRole('button', { name: /^Restore/ }).click();
	await flash(page).filter({ hasText: 'restored' }).waitFor();
	await page.locator('#graph .gnode[data-id="agent"]').click();
	ok(await page.locator('#agent-mode').isChecked() && (await api('GET',
	    'apps/' + ag.app_id + '/workflows/draft')).graph.nodes.find((n) =>
	    n.id === 'agent').data.computer_use === true, 'Restore puts the ' +
	    'imported version back into the draft');
	/* a draft that cannot run: Publish says why, nothing is published */
	const bd = await api('GET', 'apps/' + ag.app_id + '/workflows/draft');
	bd.graph.edges.push({ id: 'dangle', source: 'agent',
	    target: 'nowhere', sourceHandle: 'source' });
	await api('POST', 'apps/' + ag.app_id + '/workflows/draft', {
	    graph: bd.graph, features: bd.features, environment_variables:
	    bd.environment_variables, conversation_variables:
	    bd.conversation_variables, hash: bd.hash });
	await page.reload();
	await page.locator('#graph svg .gnode').first().waitFor();
	await page.locator('#publish').click();
	await flash(page).filter({ hasText: 'Not published' }).waitFor();
	ok(/nowhere/.test(await flash(page).textContent()) && (await api(
	    'GET', 'apps/' + ag.app_id + '/workflows?limit=20')).items
	    .length === 2, 'Publish of a draft that cannot run names the ' +
	    'problem and publishes nothing');
	for (const a of [imp, br, ag])
		await api('DELETE', 'apps/' + a.app_id);
}

/*
 * Settings > Tools: an import that names a provider without credentials
 * says so; the tavily card needs credentials and names the app using it;
 * Save, Test (against tests/fakes/fake_tools.py) and the card configured
 * with its key masked; the app's page no longer warns.
 */
async function toolsSettings(page) {
	if (!process.env.TOOLS || !process.env.TOOLS_APP) {
		console.log('skip - the tool fakes were not started');
		return;
	}
	await page.goto(URL_ + '#/apps');
	await page.locator('#import-file').setInputFiles(process.env.TOOLS_APP);
	await page.locator('#import-form button[type=submit]').click();
	await row(page, 'Built-in tools').waitFor();
	const leaked = flash(page).locator('.leaked');
	await leaked.waitFor();
	ok(/will not run here/.test(await leaked.textContent()) &&
	    /tavily/.test(await leaked.textContent()),
	    'an import lists the tools that will not run, with why',
	    await leaked.textContent());
	await page.locator('#nav').getByRole('link', { name: 'Tools',
	    exact: true }).click();
	await page.locator('h1', { hasText: 'Tools' }).waitFor();
	const card = page.locator('.provider[data-name="tavily"]');
	await card.waitFor();
	ok(/needs credentials/.test(await card.locator('h2').textContent()),
	    'Settings > Tools: tavily needs credentials',
	    await card.locator('h2').textContent());
	ok(/Used by: Built-in tools/.test(await card.locator('.uses')
	    .textContent()), '... and names the app that uses it',
	    await card.locator('.uses').textContent());
	ok(await page.locator('.provider[data-name="yahoo"]')
	    .textContent().then((t) => /Not supported by flowcgi/.test(t)),
	    'an unsupported provider says why');
	await card.locator('input[name="tavily_api_key"]').fill('tvly-browser');
	await card.locator('input[name="base_url"]').fill(process.env.TOOLS +
	    '/tavily');
	ok(await card.locator('input[name="tavily_api_key"]')
	    .getAttribute('type') === 'password', 'the key field hides what ' +
	    'is typed');
	await card.getByRole('button', { name: 'Save' }).click();
	await card.locator('.out .msg.ok').waitFor();
	ok(/Saved/.test(await card.locator('.out').textContent()), 'Save');
	await card.getByRole('button', { name: 'Test' }).click();
	await card.locator('.out .msg', { hasText: 'answered' }).waitFor();
	ok(/The provider answered/.test(await card.locator('.out')
	    .textContent()), 'Test calls the provider with the key');
	await page.reload();
	await card.waitFor();
	ok(/configured/.test(await card.locator('h2').textContent()) &&
	    await card.locator('input[name="tavily_api_key"]').inputValue() ===
	    '[__HIDDEN__]', 'after a reload the card is configured, the key ' +
	    'masked', [await card.locator('h2').textContent(),
	    await card.locator('input[name="tavily_api_key"]').inputValue()]);
	await shot(page, 'settings-tools');
	await page.goto(URL_ + '#/apps');
	await row(page, 'Built-in tools').locator('a.app-name').click();
	await page.locator('#app-title').waitFor();
	await page.locator('#dsl-totals').waitFor();
	ok(await page.locator('.leaked').count() === 0, 'the app\'s page ' +
	    'no longer warns once the key is set');
	await page.goto(URL_ + '#/apps');
	await row(page, 'Built-in tools').waitFor();
	page.once('dialog', (d) => d.accept());
	await row(page, 'Built-in tools').getByRole('button', {
	    name: 'Delete Built-in tools' }).click();
	await page.locator('#dlg[open]').waitFor();
	await page.locator('#dlg-ok').click();
	await row(page, 'Built-in tools').waitFor({ state: 'detached' });
}

async function run(page) {
	/*
	 * ---- the first load: nothing the page asks for is missing ----
	 * (a browser asks for an icon on every load; without one it logs a
	 * 404 in the console). Watched on the context, where the icon's
	 * request shows.
	 */
	const ctx = page.context();
	const loadErrors = [];
	const onConsole = (m) => {
		if (m.type() === 'error')
			loadErrors.push('console: ' + m.text());
	};
	const onResponse = (r) => {
		if (r.status() >= 400)
			loadErrors.push(r.status() + ' ' + r.url());
	};
	const onFailed = (r) => loadErrors.push('failed: ' + r.url());
	page.on('console', onConsole);
	ctx.on('response', onResponse);
	ctx.on('requestfailed', onFailed);
	/*
	 * The icon the page links, or the first error: without a link the
	 * browser's own /favicon.ico 404 shows only in the console.
	 */
	const iconSeen = Promise.race([
		ctx.waitForEvent('response',
		    (r) => /\/favicon\.svg$/.test(r.url())),
		page.waitForEvent('console', (m) => m.type() === 'error')
		    .then(() => null),
	].map((p) => p.catch(() => null)));
	await page.goto(URL_, { waitUntil: 'load' });
	const icon = await iconSeen;
	if (icon !== null)
		await icon.finished();
	ok(icon !== null && icon.status() === 200 &&
	    icon.headers()['content-type'] === 'image/svg+xml',
	    'the page\'s icon loads: favicon.svg, image/svg+xml',
	    icon && icon.status() + ' ' + icon.headers()['content-type']);
	ok(icon !== null && icon.url() === new URL('favicon.svg', URL_).href,
	    'the icon is asked for under the mount prefix', icon && icon.url());
	await page.locator('#token').waitFor();
	page.off('console', onConsole);
	ctx.off('response', onResponse);
	ctx.off('requestfailed', onFailed);
	ok(loadErrors.length === 0, 'the first load logs no error and no ' +
	    '404 in the console', loadErrors);

	/* ---- a wrong token, then the right one ---- */
	ok(await page.locator('h1').textContent() === 'Sign in' &&
	    !await page.locator('#nav').isVisible(),
	    'the page opens on the sign-in form, no navigation yet');
	await page.locator('#token').fill('not-the-token');
	await page.keyboard.press('Enter');
	const err = page.locator('#signin-error .msg');
	await err.waitFor();
	ok(/refused/.test(await err.textContent()), 'a wrong token is ' +
	    'refused with a message, still on the sign-in form',
	    await err.textContent());
	ok(await page.evaluate(() => sessionStorage.length) === 0,
	    'a refused token is not kept');
	await page.locator('#token').fill(TOKEN);
	await page.locator('#signin button[type=submit]').click();
	await page.locator('h1', { hasText: 'Apps' }).waitFor();
	ok(await page.locator('#nav').isVisible(), 'signed in: the apps ' +
	    'list and the navigation show');

	/* ---- import a corpus app and one with an agent node ---- */
	await page.locator('#import-file').setInputFiles(path.join(CORPUS,
	    'difytest__conditional_hello_branching_workflow.yml'));
	await page.locator('#import-form button[type=submit]').click();
	await row(page, 'if-else').waitFor();
	ok(/Imported/.test(await flash(page).textContent()),
	    'importing a .yml says so');
	await page.locator('#import-file').setInputFiles(path.join(CORPUS,
	    'svcvit__Agent工具调用.yml'));
	await page.locator('#import-form button[type=submit]').click();
	await row(page, 'Agent工具调用').waitFor();
	ok(await rows(page).count() === 2, 'two apps are listed after two ' +
	    'imports', await rows(page).count());
	ok(await row(page, 'Agent工具调用').locator('.mode').textContent() ===
	    'advanced-chat' && await row(page, 'Agent工具调用')
	    .locator('.runtime').textContent() === 'classic',
	    'the list shows mode and runtime');

	/* ---- upgrade it: both apps are then listed ---- */
	await row(page, 'Agent工具调用').getByRole('button',
	    { name: 'Upgrade Agent工具调用' }).click();
	await page.locator('#dlg[open]').waitFor();
	await page.locator('#dlg-ok').click();
	await row(page, 'Agent工具调用 (Sandboxed)').waitFor();
	const msg = await flash(page).textContent();
	ok(/Upgraded to the sandboxed runtime: 1 agent node\(s\) converted/
	    .test(msg), 'upgrading reports the converted agent node', msg);
	ok(await row(page, 'Agent工具调用 (Sandboxed)').locator('.runtime')
	    .textContent() === 'sandboxed' && await row(page, 'Agent工具调用')
	    .locator('.runtime').textContent() === 'classic' &&
	    await rows(page).count() === 3,
	    'the original (classic) and the upgraded copy (sandboxed) are ' +
	    'both listed');
	await shot(page, 'apps');

	/* ---- export: the sandboxed app as a .zip bundle, a classic as .yml */
	let [dl] = await Promise.all([page.waitForEvent('download'),
	    row(page, 'Agent工具调用 (Sandboxed)').getByRole('button',
		{ name: /^Export/ }).click()]);
	const zipPath = path.join(OUT, 'bundle.zip');
	await dl.saveAs(zipPath);
	const zip = fs.readFileSync(zipPath);
	ok(zip.length > 100 && zip.subarray(0, 2).toString() === 'PK' &&
	    /\.zip$/.test(dl.suggestedFilename()),
	    'the bundle export downloads a .zip (bytes start with PK)',
	    [dl.suggestedFilename(), zip.subarray(0, 4).toString('hex')]);
	/* the bundle imports back: a fourth app */
	await page.locator('#import-file').setInputFiles(zipPath);
	await page.locator('#import-form button[type=submit]').click();
	await page.locator('#flash .msg', { hasText: 'bundle.zip' }).waitFor();
	await page.waitForFunction(() => document.querySelectorAll(
	    '#apps-table tbody tr').length === 4);
	ok(await rows(page).count() === 4 && await page.locator(
	    '#apps-table tbody tr .runtime', { hasText: 'sandboxed' })
	    .count() === 2, 'the .zip bundle imports back as a sandboxed app');
	/* a newer DSL version asks first (pending), then imports */
	const future = fs.readFileSync(path.join(CORPUS,
	    'difytest__conditional_hello_branching_workflow.yml'), 'utf8')
	    .replace(/^version: .*$/m, 'version: 0.99.0')
	    .replace(/^  name: if-else$/m, '  name: from the future');
	await page.locator('#import-file').setInputFiles({ name: 'future.yml',
	    mimeType: 'application/yaml', buffer: Buffer.from(future) });
	await page.locator('#import-form button[type=submit]').click();
	await page.locator('#dlg[open]').waitFor();
	ok(/0\.99\.0/.test(await page.locator('#dlg-body').textContent()),
	    'a newer DSL version asks for confirmation, naming the version');
	await page.locator('#dlg-ok').click();
	await row(page, 'from the future').waitFor();
	ok(await rows(page).count() === 5, 'confirmed, the pending import ' +
	    'completes');
	[dl] = await Promise.all([page.waitForEvent('download'),
	    row(page, 'if-else').getByRole('button', { name: /^Export/ })
		.click()]);
	const ymlPath = path.join(OUT, 'if-else.yml');
	await dl.saveAs(ymlPath);
	ok(/^app:/m.test(fs.readFileSync(ymlPath, 'utf8')) &&
	    /kind: app/.test(fs.readFileSync(ymlPath, 'utf8')),
	    'a classic app exports as DSL YAML');

	/* ---- one app: files (upload, skill, download) ---- */
	await row(page, 'Agent工具调用 (Sandboxed)').last().locator('a.app-name')
	    .click();
	await page.locator('#app-title').waitFor();
	ok(await page.locator('#app-title').textContent() ===
	    'Agent工具调用 (Sandboxed)', 'the app page opens');
	await page.locator('#upgraded-from').waitFor();
	ok(/A sandboxed copy of a classic app/.test(await page.locator(
	    '#upgraded-from').textContent()) && await page.locator(
	    '#upgraded-from a').getAttribute('href') !== null,
	    'the Overview says which classic app the copy was made from');
	await page.getByRole('link', { name: 'Files' }).click();
	await page.locator('#mkdir-form').waitFor();
	await page.locator('#mkdir-name').fill('report');
	await page.locator('#mkdir-form button[type=submit]').click();
	await page.locator('#file-tree .name', { hasText: 'report' })
	    .waitFor();
	await page.locator('#upload-folder').selectOption({ label: '/report' });
	await page.locator('#upload-file').setInputFiles({
		name: 'SKILL.md', mimeType: 'text/markdown',
		buffer: Buffer.from('---\nname: report\ndescription: Writes ' +
		    'the weekly <b>report</b>\n---\n# Report\n'),
	});
	await page.locator('#upload-form button[type=submit]').click();
	const skill = page.locator('#file-tree .skill');
	await skill.waitFor();
	ok(/Writes the weekly <b>report<\/b>/.test(await skill.textContent()),
	    'a skill folder shows its description, as text (no markup)',
	    await skill.textContent());
	await shot(page, 'app-files');
	ok(await page.locator('#file-tree b').count() === 0,
	    'text from the server is never turned into elements');
	await page.locator('#upload-folder').selectOption({ index: 0 });
	const notes = 'notes for the test: ' + Date.now() + '\n';
	await page.locator('#upload-file').setInputFiles({ name: 'notes.txt',
	    mimeType: 'text/plain', buffer: Buffer.from(notes) });
	await page.locator('#upload-form button[type=submit]').click();
	const notesLi = page.locator('#file-tree li', {
	    has: page.locator('.name', { hasText: /^notes\.txt$/ }) });
	await notesLi.waitFor();
	ok(await page.locator('#file-tree li').count() === 3,
	    'the tree holds the folder, SKILL.md and the uploaded file',
	    await page.locator('#file-tree li').count());
	[dl] = await Promise.all([page.waitForEvent('download'),
	    notesLi.getByRole('button', { name: 'Download notes.txt' })
		.click()]);
	const back = fs.readFileSync(await dl.path(), 'utf8');
	ok(back === notes, 'downloading the uploaded file gives its bytes');

	/* ---- API keys ---- */
	await page.getByRole('link', { name: 'API keys' }).click();
	await page.locator('#create-key').click();
	const key = (await page.locator('#new-key-token').textContent()).trim();
	ok(/^app-[A-Za-z0-9]{24}$/.test(key), 'a new API key is shown once, ' +
	    'in full', key);
	await page.locator('#keys-table tbody tr').first().waitFor();
	ok(await page.locator('#keys-table tbody tr').count() === 1 &&
	    !(await page.locator('#keys-table').textContent()).includes(key),
	    'the key list shows one key, masked');
	const info = await fetch(ORIGIN_PREFIX + 'v1/info',
	    { headers: { Authorization: 'Bearer ' + key } });
	ok(info.status === 200 && (await info.json()).name ===
	    'Agent工具调用 (Sandboxed)', 'the key works on the service API');

	/* ---- run an app from its start inputs, events arriving live ---- */
	await page.goto(URL_ + '#/apps');
	await page.locator('#import-file').setInputFiles(path.join(FIXTURES,
	    'slow_code.yml'));
	await page.locator('#import-form button[type=submit]').click();
	await row(page, 'slow code').locator('a.app-name').click();
	await page.locator('#app-title').waitFor();
	/* the overview fills in when the app's DSL has loaded */
	await page.locator('#dsl-totals').waitFor();
	await page.locator('#node-types tbody tr').first().waitFor();
	const nodeTypes = await page.locator('#node-types tbody tr')
	    .allTextContents();
	ok(nodeTypes.join('|') === 'code1|end1|start1' &&
	    /3 nodes, 2 edges/.test(await page.locator('#dsl-totals')
	    .textContent()), 'the overview counts the nodes by type',
	    nodeTypes);
	await shot(page, 'app-overview');
	await page.getByRole('link', { name: 'Run', exact: true }).click();
	await page.locator('#run-form').waitFor();
	ok(await page.locator('label[for="in-name"]').textContent() ===
	    'Name *', 'the run form is built from the start inputs');
	await page.locator('#in-name').fill('Ada <i>Lovelace</i>');
	await page.evaluate(() => {
		window.__seen = [];
		const ol = document.getElementById('events');
		new MutationObserver((ms) => {
			for (const m of ms)
				for (const n of m.addedNodes)
					window.__seen.push([n.dataset.event,
					    performance.now(), document
					    .getElementById('run-button')
					    .disabled]);
		}).observe(ol, { childList: true });
	});
	await page.locator('#run-button').click();
	await page.locator('#events li[data-event="workflow_finished"]')
	    .waitFor({ timeout: 15000 });
	const seen = await page.evaluate(() => window.__seen);
	const names = seen.map((s) => s[0]).join(' ');
	ok(names === 'workflow_started node_started node_finished ' +
	    'node_started node_finished node_started node_finished ' +
	    'workflow_finished', 'the run shows its events in order', names);
	const codeStart = seen[3], finish = seen[seen.length - 1];
	ok(codeStart && codeStart[2] === true &&
	    finish[1] - codeStart[1] > 1000, 'events appear live: the ' +
	    'code node was shown as started over a second before the run ' +
	    'finished, while the run was still going', seen);
	ok(/Hello, Ada <i>Lovelace<\/i>/.test(await page
	    .locator('#run-outputs').textContent()) && await page
	    .locator('#run-result i').count() === 0,
	    'the outputs show, as text');
	ok(/node_started · Slow greeting \(code\)/.test(await page
	    .locator('#events').textContent()), 'node events name the node');
	await shot(page, 'app-run');

	/* ---- the run history and a run's node trace ---- */
	await page.getByRole('link', { name: 'Runs' }).click();
	await page.locator('#runs-table tbody tr').first().waitFor();
	const runRow = page.locator('#runs-table tbody tr').first();
	ok(await page.locator('#runs-table tbody tr').count() === 1 &&
	    /succeeded/.test(await runRow.textContent()) &&
	    /\d\.\d{3} s/.test(await runRow.textContent()),
	    'the run is listed with its status and time',
	    await runRow.textContent());
	await runRow.getByRole('link', { name: 'Trace' }).click();
	await page.locator('#trace-nodes details').first().waitFor();
	ok(await page.locator('#trace-nodes details').count() === 3,
	    'the trace has one entry per node',
	    await page.locator('#trace-nodes details').count());
	const codeTrace = page.locator('#trace-nodes details',
	    { hasText: 'Slow greeting' });
	await codeTrace.locator('summary').click();
	const codeText = await codeTrace.textContent();
	ok(/Inputs/.test(codeText) && /Ada <i>Lovelace<\/i>/.test(codeText) &&
	    /Outputs/.test(codeText) && /Hello, Ada/.test(codeText),
	    'a node of the trace shows its inputs and outputs');
	await shot(page, 'app-trace');

	await sandboxedRun(page);
	await graphAndEdits(page);

	/* ---- Settings > Sandbox Provider, against the test's sshd ---- */
	await page.getByRole('link', { name: 'Sandbox Provider' }).click();
	await page.locator('h1', { hasText: 'Sandbox Provider' }).waitFor();
	const card = (t) => page.locator('.provider[data-type="' + t + '"]');
	await card('ssh').waitFor();
	ok(await card('local').count() === 1 && await card('e2b').count() ===
	    1, 'Sandbox Provider: one card per provider (local, ssh, e2b)');
	ok(await card('local').locator('.badge.active').count() === 1 &&
	    await card('ssh').locator('.badge.active').count() === 0,
	    'local is marked active at first');
	ok(await card('ssh').locator('input[name="ssh_password"]')
	    .getAttribute('type') === 'password' && await card('e2b')
	    .locator('input[name="api_key"]').getAttribute('type') ===
	    'password', 'secrets are password fields in the forms built ' +
	    'from the schemas');
	const ssh = card('ssh');
	await ssh.locator('input[name="ssh_host"]').fill('127.0.0.1');
	await ssh.locator('input[name="ssh_port"]').fill(SSH.port);
	await ssh.locator('input[name="ssh_username"]').fill(SSH.user);
	await ssh.locator('input[name="base_working_path"]').fill(SSH.base);
	await ssh.locator('input[name="ssh_password"]').fill('wrong password');
	await ssh.getByRole('button', { name: 'Save' }).click();
	await ssh.locator('.msg.error').waitFor();
	const sshErr = await ssh.locator('.msg.error').textContent();
	ok(/authentication failed/.test(sshErr), 'Save with a wrong ' +
	    'password shows the error as ssh gave it', sshErr);
	await ssh.locator('input[name="ssh_password"]').fill(SSH.pass);
	await ssh.getByRole('button', { name: 'Save' }).click();
	await card('ssh').locator('.badge.cfg').waitFor();
	ok(await card('ssh').locator('input[name="ssh_password"]')
	    .inputValue() === '[__HIDDEN__]' && !(await page.content())
	    .includes(SSH.pass), 'saved: the password comes back masked, ' +
	    'never in clear');
	ok(/^ssh-/.test(await card('ssh').locator('input[name="ssh_host_key"]')
	    .inputValue()), 'saved: the host key is pinned');
	await card('ssh').getByRole('button', { name: 'Test connection' })
	    .click();
	await card('ssh').locator('.msg.ok').waitFor();
	ok(await card('ssh').locator('.msg.error').count() === 0,
	    'Test connection with the masked password works');
	await card('ssh').getByRole('button', { name: 'Activate' }).click();
	await card('ssh').locator('.badge.active').waitFor();
	ok(await card('local').locator('.badge.active').count() === 0,
	    'Activate: ssh is the active one, local no longer');
	await shot(page, 'settings-sandbox');
	await card('local').getByRole('button', { name: 'Activate' }).click();
	await card('local').locator('.badge.active').waitFor();
	ok(await card('ssh').locator('.badge.active').count() === 0,
	    'switched back to local');
	await card('ssh').getByRole('button', { name: 'Remove' }).click();
	await page.locator('#dlg[open]').waitFor();
	await page.locator('#dlg-ok').click();
	await card('ssh').locator('.badge.cfg').waitFor({ state: 'detached' });
	ok(await card('ssh').getByRole('button', { name: 'Remove' }).count() ===
	    0, 'Remove: ssh is no longer configured');
	await dockerCard(page);
	await page.getByRole('link', { name: 'Model Providers' }).click();
	await page.locator('h1', { hasText: 'Model Providers' }).waitFor();
	await page.locator('.provider h2', { hasText: 'Add a provider' })
	    .waitFor();
	ok(await page.locator('#not-available').count() === 0 && await page
	    .locator('.provider h2', { hasText: 'Add a provider' }).count() ===
	    1, 'Model Providers: the list and an add form');
	await shot(page, 'settings-models');

	/* ---- phone width ---- */
	await page.setViewportSize({ width: 375, height: 740 });
	await page.goto(URL_ + '#/apps');
	await rows(page).first().waitFor();
	const layout = await page.evaluate(() => ({
		scroll: document.documentElement.scrollWidth,
		width: window.innerWidth,
		thead: getComputedStyle(document.querySelector(
		    '#apps-table thead')).display,
	}));
	ok(layout.scroll <= layout.width && layout.thead === 'none',
	    'at phone width nothing scrolls sideways and rows become cards',
	    layout);
	await shot(page, 'apps-phone');
	await page.setViewportSize({ width: 1200, height: 900 });

	/* ---- keyboard only ---- */
	await page.goto(URL_ + '#/apps');
	await rows(page).first().waitFor();
	const focusId = () => page.evaluate(() => document.activeElement.id);
	let tabs = 0;
	while (await focusId() !== 'new-name' && tabs < 60) {
		await page.keyboard.press('Tab');
		tabs++;
	}
	ok(await focusId() === 'new-name', 'Tab reaches the new-app form',
	    tabs);
	await page.keyboard.type('Keyboard app');
	await page.keyboard.press('Enter');
	await row(page, 'Keyboard app').waitFor();
	ok(await rows(page).count() === 7, 'Enter creates the app',
	    await rows(page).count());
	const focusLabel = () => page.evaluate(() =>
	    document.activeElement.getAttribute('aria-label') ||
	    document.activeElement.textContent);
	tabs = 0;
	while (await focusLabel() !== 'Delete Keyboard app' && tabs < 80) {
		await page.keyboard.press('Shift+Tab');
		tabs++;
	}
	ok(await focusLabel() === 'Delete Keyboard app', 'Shift+Tab reaches ' +
	    'the delete button of that app');
	await page.keyboard.press('Enter');
	await page.locator('#dlg[open]').waitFor();
	ok(await focusId() === 'dlg-cancel', 'the delete dialog opens with ' +
	    'Cancel focused');
	await page.keyboard.press('Escape');
	await page.locator('#dlg:not([open])').waitFor({ state: 'attached' });
	ok(await row(page, 'Keyboard app').count() === 1, 'Escape cancels: ' +
	    'the app is still there');
	await page.keyboard.press('Enter');	/* focus went back to Delete */
	await page.locator('#dlg[open]').waitFor();
	await page.keyboard.press('Tab');
	ok(await focusId() === 'dlg-ok', 'Tab moves to the Delete button');
	await page.keyboard.press('Enter');
	await row(page, 'Keyboard app').waitFor({ state: 'detached' });
	ok(await rows(page).count() === 6, 'Enter on it deletes the app');

	/* ---- an expired token: back to sign-in ---- */
	await page.evaluate(() => sessionStorage.setItem('flowcgi.admin.token',
	    'expired-token'));
	await row(page, 'if-else').locator('a.app-name').click();
	await page.locator('#signin').waitFor();
	ok(/refused the admin token/.test(await page
	    .locator('#signin-error').textContent()) && !await page
	    .locator('#nav').isVisible(), 'a 401 on any call returns to the ' +
	    'sign-in form with why', [await page.locator('#signin-error')
	    .textContent(), await page.locator('#nav').isVisible()]);
	await page.locator('#token').fill(TOKEN);
	await page.keyboard.press('Enter');
	await page.locator('#app-title').waitFor();
	ok(await page.locator('#app-title').textContent() === 'if-else',
	    'signing in again returns to the page that was asked for');

	await toolsSettings(page);

	/* ---- sign out ---- */
	await page.locator('#signout').click();
	await page.locator('#signin').waitFor();
	ok(!await page.locator('#nav').isVisible() && await page.evaluate(() =>
	    sessionStorage.getItem('flowcgi.admin.token')) === null,
	    'Sign out returns to sign-in and forgets the token');
}

main().then(() => {
	clearTimeout(watchdog);
	console.log('# browser checks done, ' + failed + ' failed');
	process.exit(failed ? 1 : 0);
}, (e) => {
	clearTimeout(watchdog);
	console.log('not ok - the browser test ran to its end');
	console.log('# ' + String(e && e.stack || e).split('\n').join('\n# '));
	process.exit(1);
});
