#!/usr/bin/env node
/*
 * editor-step.test.js — the run panel's single run of one node, in a real
 * browser (Debian's chromium, headless, playwright-core); TAP lines as
 * editor.test.js prints them. tests/e2e/t_admin_editor.sh runs it with
 * ADMIN_URL, ADMIN_TOKEN, CHROMIUM, OUT_DIR and STEP_APP (the DSL of
 * start -> llm -> code -> template -> end, tests/e2e/apps/single_step.yml).
 *
 * The draft runs; the code node's "Run this node" opens its inputs
 * prefilled with those of its last run, one is edited and the node runs
 * alone: its new output shows and the node is coloured; from the template
 * node's settings panel the same, its last inputs prefilled; an end node
 * offers no single run, as in Dify.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { chromium } = require('playwright-core');

const URL_ = process.env.ADMIN_URL;
const TOKEN = process.env.ADMIN_TOKEN;
const OUT = process.env.OUT_DIR || fs.mkdtempSync('/tmp/editor-step-');
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

/* The single-step form's fields: {key: value}. */
const stepFields = (page) => page.locator('#edit-step-fields textarea')
    .evaluateAll((l) => Object.fromEntries(l.map((t) =>
    [t.dataset.key, t.value])));

/* JSON text, or null (the panel shows none as a dash). */
function json(text) {
	try {
		return JSON.parse(text);
	} catch (e) {
		return null;
	}
}

/* Runs the open single step; its status, outputs and the node's class. */
async function stepRun(page, id) {
	await page.locator('#edit-step-status').evaluate((e) =>
	    e.removeAttribute('data-status'));
	await page.locator('#edit-step-go').click();
	await until(page, async () => page.locator(
	    '#edit-step-status[data-status]').count(), 200);
	return {
		status: await page.locator('#edit-step-status')
		    .getAttribute('data-status'),
		outputs: json(await page.locator('#edit-step-outputs')
		    .textContent()),
		cls: await page.locator(sel(id)).getAttribute('class'),
		stat: await page.locator(sel(id) + ' .gstat').textContent(),
	};
}

async function run(page) {
	await page.goto(URL_);
	await page.locator('#token').fill(TOKEN);
	await page.keyboard.press('Enter');
	await page.locator('#apps-list').waitFor();
	const imp = await consoleApi('POST', 'apps/imports', { mode:
	    'yaml-content', yaml_content: fs.readFileSync(process.env.STEP_APP,
	    'utf8') });
	const app = imp.json && imp.json.app_id;
	ok(!!app, 'the llm, code and template workflow is imported', imp.text);
	await page.goto(URL_ + '#/app/' + app + '/edit');
	await page.locator(sel('code')).waitFor();

	/* the draft runs */
	await page.locator('#edit-run > summary').click();
	await page.locator('#edit-run #in-q').fill('hello');
	await page.locator('#edit-run #in-n').fill('3');
	await page.locator('#edit-run-go').click();
	await until(page, async () => page.locator(
	    '#edit-run-status[data-status]').count(), 200);
	const outs = await page.locator('#edit-run-outputs').textContent();
	ok(/echo: say hello x6/.test(outs), 'the draft ran', outs);
	const btns = await page.locator('#edit-run-nodes > li').evaluateAll(
	    (l) => l.map((x) => x.dataset.node + ':' +
	    !!x.querySelector('button.step-node')));
	ok(JSON.stringify(btns) === JSON.stringify(['s:true', 'llm:true',
	    'code:true', 't:true', 'end:false']), 'every node but the end ' +
	    'offers "Run this node", as Dify\'s canRunBySingle', btns);

	/* rerun the code node with an edited input */
	await page.locator('#edit-run-nodes > li[data-node="code"] ' +
	    'button.step-node').click();
	await until(page, async () => /last inputs/.test(await page
	    .locator('#edit-step-status').textContent()));
	const f1 = await stepFields(page);
	ok(f1.n === '3' && f1.t === 'echo: say hello' &&
	    Object.keys(f1).length === 2, 'the code node\'s inputs are ' +
	    'prefilled with its last inputs', f1);
	await page.locator('#edit-step-fields textarea[data-key="n"]')
	    .fill('20');
	const r1 = await stepRun(page, 'code');
	ok(r1.status === 'succeeded' && r1.outputs && r1.outputs.twice ===
	    40 && r1.outputs.text === 'echo: say hello', 'the node ran alone ' +
	    'with the edited input: its new output shows', r1);
	ok(/st-succeeded/.test(r1.cls) && / s$/.test(r1.stat),
	    'and the node is coloured with its time', r1);
	const last = await consoleApi('GET', 'apps/' + app +
	    '/workflows/draft/nodes/code/last-run');
	ok(last.status === 200 && last.json.inputs.n === 20,
	    'the single step is the node\'s last run now', last.text);

	/* a failing input: the error shows, the node is coloured failed */
	await page.locator('#edit-step-fields textarea[data-key="n"]')
	    .fill('-1');
	const r2 = await stepRun(page, 'code');
	ok(r2.status === 'failed' && /st-failed/.test(r2.cls) &&
	    /negative -1/.test(await page.locator('#edit-step-status')
	    .textContent()), 'a node that fails shows its error', r2);

	/* from the template node's settings panel */
	await page.locator(sel('t') + ' .gtitle').click();
	await page.locator('#edit-panel .node-config').waitFor();
	await page.locator('#edit-step-node').click();
	await until(page, async () => /last inputs/.test(await page
	    .locator('#edit-step-status').textContent()) &&
	    /Say/.test(await page.locator('#edit-step-title').textContent()));
	const f2 = await stepFields(page);
	ok(f2.t === 'echo: say hello' && f2.k === '6', 'the template ' +
	    'node\'s panel opens its single run, prefilled', f2);
	await page.locator('#edit-step-fields textarea[data-key="k"]')
	    .fill('9');
	const r3 = await stepRun(page, 't');
	ok(r3.status === 'succeeded' && r3.outputs.output ===
	    'echo: say hello x9', 'it runs with the edited input', r3);
	await page.locator(sel('end') + ' .gtitle').click();
	await page.locator('#edit-panel .node-config').waitFor();
	ok(await page.locator('#edit-step-node').count() === 0,
	    'an end node\'s panel offers no single run');
	const f = path.join(OUT, 'editor-step.png');
	await page.screenshot({ path: f, fullPage: true });
	ok(fs.statSync(f).size > 1000, 'screenshot editor-step.png');
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
		await run(page);
	} finally {
		ok(problems.length === 0, 'no script errors and no CSP ' +
		    'violations in the console', problems);
		await ctx.close();
	}
}

main().then(() => {
	console.log('# single-step checks done, ' + failed + ' failed');
	process.exit(failed ? 1 : 0);
}, (e) => {
	console.log('not ok - the single-step test ran to its end');
	console.log('# ' + String(e && e.stack || e).split('\n').join('\n# '));
	process.exit(1);
});
