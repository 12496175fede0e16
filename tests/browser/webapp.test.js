#!/usr/bin/env node
/*
 * webapp.test.js — the Web App in a real browser: Debian's chromium,
 * headless, driven by playwright-core. Prints TAP lines ("ok - ...",
 * "not ok - ...", "# ..."); tests/e2e/t_webapp_browser.sh starts flowcgi,
 * nginx and the fake LLM, then runs this with:
 *   WEB_BASE   flowcgi's base URL under nginx (http://127.0.0.1:PORT/flow)
 *   CODE       the chat app's site code;  KEY  its service API key
 *   LLM        the fake LLM (tests/fakes/fake_llm.py)
 *   ADMIN_TOKEN, APP  to change the site's language
 *   CODE_W, CODE_A, CODE_C  the workflow, agent-chat and completion apps'
 *   CODE_K     a chatflow citing a knowledge base;  AUD  the fake audio
 *   CHROMIUM, OUT_DIR as admin.test.js
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { chromium } = require('playwright-core');

const BASE = process.env.WEB_BASE;
const CODE = process.env.CODE;
const OUT = process.env.OUT_DIR || fs.mkdtempSync('/tmp/webapp-browser-');
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
async function script(body) {
	await fetch(process.env.LLM + '/_script', { method: 'POST',
	    headers: { 'Content-Type': 'application/json' },
	    body: JSON.stringify(body) });
}
async function admin(method, p, body) {
	const r = await fetch(BASE + p, { method, headers: {
	    Authorization: 'Bearer ' + process.env.ADMIN_TOKEN,
	    'Content-Type': 'application/json' },
	    body: body ? JSON.stringify(body) : undefined });
	return r.json();
}

async function desktop(ctx) {
	const page = await ctx.newPage();
	const errors = [];
	page.on('pageerror', (e) => errors.push(String(e)));
	page.on('requestfailed', (q) => console.log('# request failed: ' + q.url() + ' ' + (q.failure() || {}).errorText));
	await page.goto(BASE + '/chat/' + CODE);
	await page.waitForSelector('.chat-layout').catch(async (e) => {
		console.log('# the page shows: ' + JSON.stringify(await page.locator('#app').innerHTML()) + ' errors: ' + JSON.stringify(errors));
		throw e;
	});
	ok(await page.locator('.top h1').textContent() === 'Helper', 'the share link shows the site title');
	ok(await page.locator('.msg.opening').count() === 1, 'the opening statement is shown');
	ok(await page.locator('.start-form #start-name').count() === 1, 'the start form asks for the inputs');

	await page.fill('#query', 'hello');
	await page.press('#query', 'Enter');
	ok(/required|必填/.test(await page.locator('.form-error').textContent()), 'a required input is asked for before the first message');
	await page.fill('#start-name', 'Ada');
	await script({ responses: [{ chunks: ['Hi ', '**Ada**', ', here is ', '`code`', ' and more', ' text.'], delay: 0.3 }] });
	await page.fill('#query', 'hello');
	await page.click('button.send');
	/* streaming: a part of the answer is shown before the end */
	await page.waitForFunction(() => {
		const b = document.querySelector('.msg.bot.streaming .body');
		return b && /Hi/.test(b.textContent);
	}, null, { timeout: 10000 });
	const partial = await page.locator('.msg.bot.streaming .body').textContent();
	ok(!/more text\./.test(partial), 'the answer streams in (a part shown first)', partial);
	await page.waitForSelector('.msg.bot:not(.streaming):not(.opening) .actions', { timeout: 15000 });
	const html = await page.locator('.msg.bot:not(.opening) .body').last().innerHTML();
	ok(/<strong>Ada<\/strong>/.test(html) && /<code>code<\/code>/.test(html), 'the answer is rendered as Markdown', html);
	await page.waitForSelector('.conv');
	ok(await page.locator('.conv').count() === 1, 'the conversation is listed');
	await shot(page, 'webapp-chat-desktop');

	await page.click('.fb-like');
	await page.waitForSelector('.fb-like[aria-pressed="true"]');
	ok(true, 'feedback: like');

	/* a second conversation */
	await page.click('button.new');
	await script({ responses: [{ text: 'Second answer' }] });
	await page.fill('#start-name', 'Bob');
	await page.fill('#query', 'again');
	await page.click('button.send');
	await page.waitForFunction(() => document.querySelectorAll('.conv').length === 2, null, { timeout: 10000 });
	ok(true, 'a second conversation is listed');

	/* pin: the pinned one goes first */
	await page.locator('.conv-pin').last().click();
	await page.waitForSelector('.conv.pinned', { timeout: 5000 });
	ok(await page.locator('.conv').first().evaluate((e) => e.classList.contains('pinned')), 'a pinned conversation is listed first');
	await page.locator('.conv.pinned .conv-pin').click();
	await page.waitForFunction(() => !document.querySelector('.conv.pinned'), null, { timeout: 5000 });
	ok(true, 'and unpinned');

	/* rename and delete */
	/* the page's own dialog (ui/components.js), not the browser's */
	await page.locator('.conv-rename').first().click();
	await page.waitForSelector('#dlg[open] #dlg-input');
	ok(await page.locator('#dlg-title').textContent() === 'Rename', 'rename asks in the page\'s dialog');
	await page.fill('#dlg-input', 'Renamed chat');
	await page.click('#dlg-ok');
	await page.waitForFunction(() => [...document.querySelectorAll('.conv-open')].some((b) => b.textContent === 'Renamed chat'), null, { timeout: 5000 });
	ok(true, 'a conversation is renamed');
	await page.locator('.conv-delete').first().click();
	await page.waitForSelector('#dlg[open] #dlg-ok.danger');
	await page.click('#dlg-cancel');
	await page.waitForSelector('#dlg', { state: 'hidden' });
	ok(await page.locator('.conv').count() === 2, 'delete cancelled keeps the conversation');
	await page.locator('.conv-delete').first().click();
	await page.waitForSelector('#dlg[open] #dlg-ok.danger');
	await page.click('#dlg-ok');
	await page.waitForFunction(() => document.querySelectorAll('.conv').length === 1, null, { timeout: 5000 });
	ok(true, 'a conversation is deleted');

	/* stop a long answer */
	await page.click('button.new');
	await script({ responses: [{ chunks: ['one ', 'two ', 'three ', 'four ', 'five ', 'six ', 'seven ', 'END'], delay: 0.5 }] });
	await page.fill('#start-name', 'Cy');
	await page.fill('#query', 'long please');
	await page.click('button.send');
	await page.waitForFunction(() => /one/.test((document.querySelector('.msg.bot.streaming .body') || {}).textContent || ''), null, { timeout: 10000 });
	await page.click('button.send.stop');
	await page.waitForSelector('button.send:not(.stop)', { timeout: 10000 });
	const stopped = await page.locator('.msg.bot:not(.opening) .body').last().textContent();
	ok(!/END/.test(stopped), 'stop ends a long answer', stopped);

	/* a file attached to a message: uploaded, then sent with it */
	await page.click('button.new');
	ok(await page.locator('label.attach').count() === 1, 'the app allows files: the composer offers to attach one');
	await page.setInputFiles('#attach', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('meeting at noon') });
	await page.waitForSelector('.attached li.file[data-id]', { timeout: 10000 });
	ok(true, 'the file is uploaded through /api/files/upload');
	await script({ responses: [{ text: 'Got your file' }] });
	await page.fill('#start-name', 'Dee');
	await page.fill('#query', 'read this');
	const sent = page.waitForRequest((q) => /\/api\/chat-messages$/.test(q.url()));
	await page.click('button.send');
	const files = JSON.parse((await sent).postData()).files || [];
	ok(files.length === 1 && files[0].transfer_method === 'local_file' && files[0].upload_file_id, 'the message carries the upload', files);
	await page.waitForFunction(() => /Got your file/.test(document.querySelector('.messages').textContent), null, { timeout: 10000 });
	ok(await page.locator('.msg.user .msg-files li').last().textContent() === 'notes.txt', 'the message shows the file it carries');
	ok(await page.locator('.attached li').count() === 0, 'and the composer is empty again');

	/* reload: the history is there */
	await page.reload();
	await page.waitForSelector('.conv');
	await page.locator('.conv-open', { hasText: 'hello' }).first().click().catch(() => {});
	const names = await page.locator('.conv-open').allTextContents();
	const target = names.findIndex((n) => n !== 'New chat' && n !== '新对话') >= 0 ? 0 : 0;
	await page.locator('.conv-open').nth(target).click();
	await page.waitForSelector('.msg.user', { timeout: 5000 });
	ok(await page.locator('.msg.user').count() >= 1, 'after a reload the history is found', names);
	ok(errors.length === 0, 'no script errors on the page', errors);
	await page.close();
}

async function phone(browser) {
	const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'zh-CN' });
	const page = await ctx.newPage();
	await page.goto(BASE + '/chat/' + CODE);
	await page.waitForSelector('.chat-layout');
	ok(await page.locator('button.menu').isVisible(), 'phone: the conversation list is behind a menu button');
	const box = await page.locator('.sidebar').boundingBox();
	ok(!box || box.x + box.width <= 1, 'phone: the list is off screen until opened', box);
	ok(await page.locator('button.send').textContent() === '发送', 'a Chinese browser gets the Chinese page');
	const width = await page.evaluate(() => document.documentElement.scrollWidth);
	ok(width <= 390, 'phone: nothing is wider than the screen', width);
	await shot(page, 'webapp-chat-phone');
	await page.click('button.menu');
	await page.waitForTimeout(300);
	await shot(page, 'webapp-chat-phone-menu');
	await ctx.close();
}

/* Dify's snippet, baseUrl changed, on a page of another origin */
async function embedded(browser) {
	const ctx = await browser.newContext();
	const page = await ctx.newPage();
	const html = '<!doctype html><html><body><h1>Shop</h1><script>\n' +
	    ' window.difyChatbotConfig = {\n  token: \'' + CODE + '\',\n  baseUrl: \'' + BASE + '\',\n' +
	    '  inputs: { name: \'Embedded Eve\' },\n  systemVariables: { user_id: \'embed-user-1\' },\n  userVariables: {},\n }\n' +
	    '</script>\n<script src="' + BASE + '/embed.min.js" id="' + CODE + '" defer></script>\n' +
	    '<style>#dify-chatbot-bubble-button{background-color:#1C64F2!important;}#dify-chatbot-bubble-window{width:24rem!important;height:40rem!important;}</style></body></html>';
	page.on('console', (m) => console.log('# console: ' + m.text()));
	page.on('pageerror', (e) => console.log('# pageerror: ' + e));
	/* another origin: the same loopback address, another port */
	const shop = require('node:http').createServer((q, r) => {
		r.writeHead(200, { 'Content-Type': 'text/html' });
		r.end(html);
	});
	await new Promise((res) => shop.listen(0, '127.0.0.1', res));
	await page.goto('http://127.0.0.1:' + shop.address().port + '/');
	await page.waitForSelector('#dify-chatbot-bubble-button', { timeout: 10000 });
	ok(true, 'the embed script adds the bubble');
	await page.click('#dify-chatbot-bubble-button');
	const frame = await (await page.waitForSelector('#dify-chatbot-bubble-window')).contentFrame();
	const src = await page.locator('#dify-chatbot-bubble-window').getAttribute('src');
	ok(/\/chatbot\/[A-Za-z0-9]{16}\?/.test(src) && /sys\.user_id=/.test(src), 'the iframe URL is built as Dify\'s', src);
	await frame.waitForSelector('#query', { timeout: 10000 });
	await script({ responses: [{ text: 'Embedded answer' }] });
	await frame.fill('#query', 'from the shop');
	await frame.press('#query', 'Enter');
	await frame.waitForFunction(() => /Embedded answer/.test(document.querySelector('.messages').textContent), null, { timeout: 10000 });
	ok(true, 'the embedded chatbot answers');
	const reqs = await (await fetch(process.env.LLM + '/_requests')).json();
	const sys = JSON.stringify(reqs[reqs.length - 1].body.messages);
	ok(/Embedded Eve/.test(sys), 'the snippet\'s inputs reach the run', sys);
	const conv = await (await fetch(BASE + '/v1/conversations?user=embed-user-1', { headers: { Authorization: 'Bearer ' + process.env.KEY } })).json();
	ok(conv.data && conv.data.length === 1, 'systemVariables.user_id is the end user of the run', conv);
	await shot(page, 'webapp-embed');
	await ctx.close();
	shop.close();
}

/* a workflow's page: the start form, run, the result and the steps */
async function workflowPage(browser) {
	const ctx = await browser.newContext({ viewport: { width: 1000, height: 800 }, locale: 'en-US' });
	const page = await ctx.newPage();
	await page.goto(BASE + '/workflow/' + process.env.CODE_W);
	await page.waitForSelector('#in-text');
	await page.click('button.run');
	ok(/required/.test(await page.locator('.form-error').textContent()), 'workflow: a required input is asked for');
	await page.fill('#in-text', 'Hello **world**');
	await page.click('button.run');
	await page.waitForFunction(() => /world/.test(document.querySelector('.result').textContent), null, { timeout: 10000 });
	ok(/<strong>world<\/strong>/.test(await page.locator('.result').innerHTML()), 'workflow: the result is shown as Markdown');
	await page.locator('.steps-box summary').click();
	ok(await page.locator('.steps li').count() >= 2, 'workflow: the steps are listed (show_workflow_steps)');
	await shot(page, 'webapp-workflow');
	await ctx.close();
}

/* an agent-chat app: the tool call folded above the answer */
async function agentPage(browser) {
	const ctx = await browser.newContext({ viewport: { width: 1000, height: 800 }, locale: 'en-US' });
	const page = await ctx.newPage();
	const errors = [];
	page.on('pageerror', (e) => errors.push(String(e)));
	await page.goto(BASE + '/chat/' + process.env.CODE_A);
	await page.waitForSelector('#query');
	await script({ responses: [
	    { tool_calls: [{ id: 'w', name: 'weekday', arguments: { year: 2024, month: 1, day: 1 } }] },
	    { chunks: ['It was ', 'a **Monday**.'] }] });
	await page.fill('#query', 'What day was 2024-01-01?');
	await page.click('button.send');
	await page.waitForSelector('.msg.bot:not(.streaming):not(.opening) .actions', { timeout: 15000 });
	const body = await page.locator('.msg.bot:not(.opening) .body').last().innerHTML();
	ok(/<strong>Monday<\/strong>/.test(body), 'agent-chat: the agent\'s answer streams in as Markdown', body);
	const folded = page.locator('.msg.bot:not(.opening) details.thoughts').last();
	ok(await folded.count() === 1 && !(await folded.evaluate((d) => d.open)), 'agent-chat: the tool call is folded', await folded.count());
	await folded.locator('summary').click();
	const thought = await folded.locator('.thought').first().textContent();
	ok(/weekday: .*Monday/.test(thought), 'agent-chat: opened, it shows the tool and its result', thought);
	await shot(page, 'webapp-agent');
	/* reload: the thought is in the history too */
	await page.reload();
	await page.waitForSelector('.conv');
	await page.locator('.conv-open').first().click();
	await page.waitForSelector('.msg.user', { timeout: 5000 });
	ok(await page.locator('.msg.bot details.thoughts').count() >= 1, 'agent-chat: the tool call is in the history after a reload');
	ok(errors.length === 0, 'agent-chat: no script errors', errors);
	await ctx.close();
}

/* a completion app: the form, the result, more like this, save */
async function completionPage(browser) {
	const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'en-US' });
	const page = await ctx.newPage();
	const errors = [];
	page.on('pageerror', (e) => errors.push(String(e)));
	await page.goto(BASE + '/completion/' + process.env.CODE_C);
	await page.waitForSelector('#in-text');
	await script({ responses: [{ chunks: ['Bon', 'jour **le monde**'] }] });
	await page.fill('#in-text', 'hello world');
	await page.click('button.run');
	await page.waitForSelector('.result-actions button.save', { timeout: 10000 }).catch(async (e) => {
		console.log('# ' + JSON.stringify(errors) + ' ' + await page.locator('.output').innerHTML());
		throw e;
	});
	ok(/<strong>le monde<\/strong>/.test(await page.locator('.result').innerHTML()), 'completion: the result is shown as Markdown');
	ok(await page.locator('.result-actions button.more').count() === 1, 'completion: more like this is offered (the app enables it)');
	await script({ responses: [{ chunks: ['Salut ', 'le monde'] }] });
	await page.click('.result-actions button.more');
	await page.waitForFunction(() => /Salut le monde/.test(document.querySelector('.result').textContent), null, { timeout: 10000 });
	ok(true, 'completion: more like this streams another answer');
	const reqs = await (await fetch(process.env.LLM + '/_requests')).json();
	const asked = JSON.stringify(reqs[reqs.length - 1].body.messages);
	ok(/Translate hello world to French/.test(asked), 'completion: ... from the same inputs', asked);
	await page.waitForSelector('.result-actions button.save', { timeout: 10000 });
	await page.click('.result-actions button.save');
	await page.waitForSelector('.saved-item', { timeout: 5000 });
	ok(/Salut le monde/.test(await page.locator('.saved-item').first().textContent()), 'completion: a saved result is listed');
	await page.reload();
	await page.waitForSelector('.saved-item', { timeout: 5000 });
	ok(await page.locator('.saved-item').count() === 1, 'completion: and still after a reload');
	const width = await page.evaluate(() => document.documentElement.scrollWidth);
	ok(width <= 390, 'completion on a phone: nothing is wider than the screen', width);
	await shot(page, 'webapp-completion-phone');
	await page.locator('.saved-item button').click();
	await page.waitForFunction(() => !document.querySelector('.saved-item'), null, { timeout: 5000 });
	ok(true, 'completion: a saved result is deleted');
	ok(errors.length === 0, 'completion: no script errors', errors);
	await ctx.close();
}

/* the chat page's extras: regenerate, read aloud, a spoken question, a
 * file by its link (the chat app enables them all) */
async function chatExtras(browser) {
	const ctx = await browser.newContext({ viewport: { width: 1000, height: 800 }, locale: 'en-US', permissions: ['microphone'] });
	const page = await ctx.newPage();
	const errors = [];
	page.on('pageerror', (e) => errors.push(String(e)));
	await page.goto(BASE + '/chat/' + CODE);
	await page.waitForSelector('#start-name');
	await page.fill('#start-name', 'Ann');
	await script({ responses: [{ text: 'First try' }] });
	await page.fill('#query', 'regen me');
	await page.click('button.send');
	await page.waitForSelector('.msg.bot:not(.streaming):not(.opening) .actions .regenerate', { timeout: 10000 });
	ok(true, 'the latest answer offers regenerate');
	await script({ responses: [{ text: 'Second try' }] });
	const again = page.waitForRequest((q) => /\/api\/chat-messages$/.test(q.url()));
	await page.click('.regenerate');
	const body = JSON.parse((await again).postData());
	ok(body.query === 'regen me' && body.conversation_id, 'regenerate asks the same question in the conversation', body);
	await page.waitForFunction(() => /Second try/.test(document.querySelector('.messages').textContent), null, { timeout: 10000 });
	const log = await page.locator('.messages').textContent();
	ok(!/First try/.test(log) && await page.locator('.msg.user').count() === 1, 'the new answer takes the old one\'s place', log);

	/* Dify's message tree: the regenerated answer stands beside the
	 * first ("< 2/2 >"), either one shows, a message follows the one
	 * shown, and a reload shows the newest message's thread */
	ok(body.parent_message_id === null, 'the first message regenerated: parent_message_id null (the root)', body.parent_message_id);
	const pos = () => page.locator('.msg.bot:not(.opening) .sib-pos').first().textContent();
	const shown = () => page.locator('.messages').textContent();
	await page.waitForSelector('.msg.bot:not(.streaming):not(.opening) .siblings');
	ok(await pos() === '2 / 2', 'the switcher shows the second of two answers', await pos());
	await page.click('.sib-prev');
	ok(/First try/.test(await shown()) && !/Second try/.test(await shown()) && await pos() === '1 / 2',
	    'previous: the first answer again', await shown());
	await script({ responses: [{ text: 'Third' }] });
	const follow = page.waitForRequest((q) => /\/api\/chat-messages$/.test(q.url()));
	await page.fill('#query', 'after first');
	await page.click('button.send');
	const fbody = JSON.parse((await follow).postData());
	await page.waitForFunction(() => /Third/.test(document.querySelector('.messages').textContent), null, { timeout: 10000 });
	ok(/^[0-9a-f-]{36}$/.test(fbody.parent_message_id || '') && /First try/.test(await shown()) && !/Second try/.test(await shown()),
	    'a message after the first answer names it as parent', fbody);
	const hist = await (await fetch(BASE + '/api/messages?conversation_id=' + fbody.conversation_id, { headers: {
	    'X-App-Code': CODE, 'X-App-Passport': await page.evaluate((c) => localStorage.getItem('passport-' + c), CODE) } })).json();
	ok(hist.data && hist.data.length === 3 && hist.data[0].id === fbody.parent_message_id && hist.data[2].parent_message_id === hist.data[0].id &&
	    hist.data[1].parent_message_id === null, 'stored as a tree: two roots, the third after the first', hist.data && hist.data.map((m) => [m.answer, m.parent_message_id]));
	await page.reload();
	await page.waitForSelector('.conv');
	await page.locator('.conv-open').first().click();
	await page.waitForFunction(() => /Third/.test(document.querySelector('.messages').textContent), null, { timeout: 10000 });
	ok(/First try/.test(await shown()) && !/Second try/.test(await shown()) && await pos() === '1 / 2',
	    'after a reload: the newest message\'s thread, its first answer of two', await shown());
	await page.click('.sib-next');
	ok(/Second try/.test(await shown()) && !/Third|First try/.test(await shown()) && await pos() === '2 / 2',
	    'next: the regenerated answer, with nothing after it', await shown());
	await shot(page, 'webapp-chat-siblings');
	await page.waitForSelector('.msg.bot:not(.streaming):not(.opening) .actions .tts');

	/* read aloud: the answer's message through /api/text-to-audio */
	const spoken = page.waitForResponse((r) => /\/api\/text-to-audio$/.test(r.url()));
	await page.locator('.msg.bot:not(.opening) .tts').last().click();
	const sr = await spoken;
	ok(sr.status() === 200 && /audio/.test(sr.headers()['content-type'] || ''), 'read aloud: the app\'s text-to-audio answers audio', sr.status());
	const areqs = await (await fetch(process.env.AUD + '/_requests')).json();
	const said = JSON.parse(Buffer.from(areqs[areqs.length - 1].body_b64, 'base64').toString());
	ok(said.input === 'Second try' && said.voice === 'nova', 'read aloud: the answer, in the app\'s voice', said);

	/* a question spoken: the fake microphone, then the transcript */
	ok(await page.locator('button.mic').count() === 1, 'the app takes speech: the composer offers the microphone');
	await page.click('button.mic');
	await page.waitForSelector('button.mic[aria-pressed="true"]', { timeout: 10000 });
	const heard = page.waitForResponse((r) => /\/api\/audio-to-text$/.test(r.url()));
	await page.click('button.mic');
	ok((await heard).status() === 200, 'the recording goes to /api/audio-to-text');
	await page.waitForFunction(() => /hello from the fake/.test(document.querySelector('#query').value), null, { timeout: 10000 });
	ok(true, 'and its text is in the box');
	await page.fill('#query', '');

	/* a file by its link: kept through /api/remote-files/upload */
	await page.click('button.attach-link');
	await page.waitForSelector('#dlg[open] #dlg-input');
	await page.fill('#dlg-input', BASE + '/embed.js');
	await page.click('#dlg-ok');
	await page.waitForSelector('.attached li.file[data-id]', { timeout: 10000 });
	ok(/embed\.js/.test(await page.locator('.attached li.file').textContent()), 'a file by its link is attached');
	await script({ responses: [{ text: 'Got the link' }] });
	const sent = page.waitForRequest((q) => /\/api\/chat-messages$/.test(q.url()));
	await page.fill('#query', 'see the link');
	await page.click('button.send');
	const files = JSON.parse((await sent).postData()).files || [];
	ok(files.length === 1 && files[0].transfer_method === 'remote_url' && files[0].url === BASE + '/embed.js' && files[0].upload_file_id,
	    'the message carries it as Dify\'s remote_url file', files);
	await page.waitForFunction(() => /Got the link/.test(document.querySelector('.messages').textContent), null, { timeout: 10000 });
	ok(true, 'and is answered');
	await shot(page, 'webapp-chat-extras');
	ok(errors.length === 0, 'extras: no script errors', errors);
	await ctx.close();
}

/* a chatflow with retriever_resource on: the citations under its answer */
async function citationsPage(browser) {
	const ctx = await browser.newContext({ viewport: { width: 1000, height: 800 }, locale: 'en-US' });
	const page = await ctx.newPage();
	await page.goto(BASE + '/chat/' + process.env.CODE_K);
	await page.waitForSelector('#query');
	await script({ responses: [{ text: 'Cited.' }] });
	await page.fill('#query', 'refunds');
	await page.click('button.send');
	await page.waitForSelector('.msg.bot:not(.streaming) .actions', { timeout: 10000 });
	const cit = page.locator('.msg.bot details.citations').last();
	ok(await cit.count() === 1 && /\(2\)/.test(await cit.locator('summary').textContent()), 'the answer lists its two sources, folded');
	await cit.locator('summary').click();
	ok(/kb-a says refunds \(best\)/.test(await cit.locator('.citation').first().textContent()), 'opened: the best source first, with its text');
	await page.reload();
	await page.waitForSelector('.conv');
	await page.locator('.conv-open').first().click();
	await page.waitForSelector('.msg.user', { timeout: 5000 });
	ok(await page.locator('.msg.bot details.citations').count() === 1, 'the citations are in the history after a reload');
	await shot(page, 'webapp-citations');
	await ctx.close();
}

/* the admin page's Web App card: the link opens the app, the snippet */
async function adminCard(browser) {
	const ctx = await browser.newContext({ viewport: { width: 1200, height: 900 } });
	const page = await ctx.newPage();
	await page.goto(BASE + '/admin/#/app/' + process.env.APP + '/keys');
	await page.locator('#token').fill(process.env.ADMIN_TOKEN);
	await page.locator('#signin button[type=submit]').click();
	await page.goto(BASE + '/admin/#/app/' + process.env.APP + '/keys');
	await page.waitForSelector('#webapp-card #site-link', { timeout: 10000 });
	const link = await page.locator('#site-link').getAttribute('href');
	ok(link === BASE + '/chat/' + CODE, 'the Web App card shows the share link', link);
	const snip = await page.locator('#site-script').inputValue();
	ok(snip.includes("token: '" + CODE + "'") && snip.includes(BASE + '/embed.min.js'), 'and Dify\'s embed snippet', snip);
	await page.fill('#site-title', 'Helper Bot');
	const saved = page.waitForResponse((r) => r.request().method() === 'POST' && /\/site$/.test(r.url()));
	await page.click('#site-form button[type=submit]');
	const res = await saved;
	ok(res.status() === 200, 'the card posts the settings', await res.text());
	const site = await admin('GET', '/console/api/apps/' + process.env.APP + '/site');
	ok(site.title === 'Helper Bot', 'the card saves the settings', site.title);
	await page.locator('#webapp-card').screenshot({ path: path.join(OUT, 'webapp-admin-card.png') });
	await ctx.close();
}

(async () => {
	const browser = await chromium.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
		    '--no-first-run', '--disable-background-networking',
		    '--disable-component-update', '--disable-sync',
		    '--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream'],
	});
	try {
		const ctx = await browser.newContext({ viewport: { width: 1200, height: 860 }, locale: 'en-US' });
		await desktop(ctx);
		await ctx.close();
		await phone(browser);
		await embedded(browser);
		await workflowPage(browser);
		await agentPage(browser);
		await completionPage(browser);
		await chatExtras(browser);
		await citationsPage(browser);
		await adminCard(browser);
	} catch (e) {
		ok(false, 'the browser script ran without an exception', String(e.stack || e));
	}
	await browser.close();
	process.exit(failed ? 1 : 0);
})();
