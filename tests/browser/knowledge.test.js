#!/usr/bin/env node
/*
 * knowledge.test.js — the admin page's Knowledge section in Debian's
 * chromium, headless, driven by playwright-core: create a knowledge base,
 * upload a Word file (its progress bar filled), wait for its indexing
 * status to read completed, see a chunk of its text and hit-test a query
 * that shows a score. Prints TAP lines; tests/e2e/t_admin_knowledge.sh
 * runs it with ADMIN_URL, ADMIN_TOKEN, CHROMIUM, DOC (the file) and
 * OUT_DIR (profile and screenshot).
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { chromium } = require('playwright-core');

const OUT = process.env.OUT_DIR;
const DOC = process.env.DOC;
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

async function main() {
	const ctx = await chromium.launchPersistentContext(
	    path.join(OUT, 'kb-profile'), {
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		viewport: { width: 1200, height: 900 },
		args: ['--headless', '--no-sandbox', '--disable-gpu',
		    '--no-first-run', '--disable-background-networking',
		    '--disable-component-update', '--disable-sync'],
	    });
	const page = ctx.pages()[0] || await ctx.newPage();
	const errors = [];
	page.on('pageerror', (e) => errors.push(e.message));
	await page.goto(process.env.ADMIN_URL);
	await page.locator('#token').fill(process.env.ADMIN_TOKEN);
	await page.locator('#signin button[type=submit]').click();
	await page.locator('nav a[href="#/knowledge"]').click();
	await page.locator('#kb-create').waitFor();
	ok(await page.locator('h1').textContent() === 'Knowledge',
	    'the nav opens the Knowledge section');

	await page.locator('#kb-name').fill('Meeting notes');
	await page.locator('#kb-desc').fill('minutes of the meetings');
	await page.locator('#kb-create button[type=submit]').click();
	await page.locator('#kb-upload').waitFor();
	ok(await page.locator('h1').textContent() === 'Meeting notes',
	    'Create opens the new knowledge base');
	ok(/#\/knowledge\/[^/]+$/.test(page.url()), '... at its own fragment',
	    page.url());

	await page.locator('#kb-file').setInputFiles(DOC);
	await page.locator('#kb-upload button[type=submit]').click();
	const row = page.locator('#kb-docs tr', { hasText: 'notes.docx' });
	await row.waitFor();
	ok(await page.locator('#kb-progress progress').evaluate((p) =>
	    p.value) === 1, 'the upload\'s progress bar is full');
	/* the list polls until the document's indexing settles */
	await row.locator('td.status[data-status="completed"]').waitFor();
	ok(true, 'the document\'s indexing status comes to completed');

	await row.getByRole('button', { name: 'Chunks of notes.docx' }).click();
	const chunk = page.locator('#kb-chunks li.chunk').first();
	await chunk.waitFor();
	const text = await chunk.textContent();
	ok(text.includes('会议纪要'), 'a chunk shows the document\'s text',
	    text);

	await page.locator('#kb-query').fill('会议纪要');
	await page.locator('#kb-hit button[type=submit]').click();
	const score = page.locator('#kb-hits li.hit .score').first();
	await score.waitFor();
	const s = Number(await score.textContent());
	ok(s > 0, 'hit testing shows a score', s);
	ok((await page.locator('#kb-hits li.hit').first().textContent())
	    .includes('notes.docx'), '... and the document it came from');
	const f = path.join(OUT, 'admin-knowledge.png');
	await page.screenshot({ path: f, fullPage: true });
	ok(fs.statSync(f).size > 1000, 'screenshot admin-knowledge.png');

	ok(errors.length === 0, 'no script errors on the page', errors);
	await ctx.close();
}

main().then(() => process.exit(failed ? 1 : 0), (e) => {
	console.log('not ok - the script ran: ' + (e && e.stack || e));
	process.exit(1);
});
