/*
 * sdk.test.mjs — Dify's official Node SDK (dify-client, pinned in
 * package-lock.json) against flowcgi behind nginx: every method of
 * DifyClient, ChatClient and CompletionClient that applies to a
 * self-hosted app, on a chat, agent-chat, completion, chatflow and
 * workflow app, with the fake LLM answering. dify-client 2.3.2 has no
 * WorkflowClient: runWorkflow is a CompletionClient method there. The
 * routes it has no method for are reached through its own sendRequest.
 *
 * Prints TAP lines ("ok - ...", "not ok - ...", "# ...") and a closing
 * "# N passed, N failed"; tests/e2e/t_sdk.sh starts everything and runs
 * this with:
 *   DIFY_BASE   the service API, e.g. http://127.0.0.1:PORT/v1
 *   KEY_CHAT, KEY_AGENT, KEY_COMPLETION, KEY_CHATFLOW, KEY_WORKFLOW
 *               an API key of each app
 *   LLM         the fake LLM's URL, to script its answers
 */
import { ChatClient, CompletionClient, DifyClient } from 'dify-client';

const BASE = process.env.DIFY_BASE;
const LLM = process.env.LLM;
const KEY = {
	chat: process.env.KEY_CHAT,
	agent: process.env.KEY_AGENT,
	completion: process.env.KEY_COMPLETION,
	chatflow: process.env.KEY_CHATFLOW,
	workflow: process.env.KEY_WORKFLOW,
};

let passed = 0;
let failed = 0;
function ok(cond, what, detail) {
	console.log((cond ? 'ok - ' : 'not ok - ') + what);
	if (cond)
		passed++;
	else {
		failed++;
		if (detail !== undefined)
			console.log('#   got: ' + JSON.stringify(detail));
	}
	return cond;
}
function is(got, want, what) {
	return ok(JSON.stringify(got) === JSON.stringify(want), what, got);
}

/* Scripts the fake LLM's next answers (tests/fakes/fake_llm.py). */
async function script(responses) {
	const r = await fetch(LLM + '/_script', {
		method: 'POST',
		headers: { 'Content-Type': 'application/json' },
		body: JSON.stringify({ responses }),
	});
	if (!r.ok)
		throw new Error('scripting the fake LLM: ' + r.status);
}

/* The events of a streamed answer (axios responseType "stream"). */
async function events(resp) {
	let text = '';
	for await (const chunk of resp.data)
		text += chunk.toString();
	return text.split('\n').filter((l) => l.startsWith('data: '))
	    .map((l) => JSON.parse(l.slice(6)));
}

/* What an SDK call threw: {status, data} of the HTTP answer. */
async function failure(p) {
	try {
		const r = await p;
		return { status: r.status, data: r.data };
	} catch (e) {
		if (e.response === undefined)
			throw e;
		return { status: e.response.status, data: e.response.data };
	}
}

function usageOk(u) {
	return u !== undefined && u.prompt_tokens > 0 &&
	    u.completion_tokens > 0 &&
	    u.total_tokens === u.prompt_tokens + u.completion_tokens &&
	    u.currency === 'USD' && u.total_price === '0';
}

/* ====== chat ====== */

async function chat() {
	const c = new ChatClient(KEY.chat, BASE);
	const user = 'sdk-ann';
	let r;

	r = await c.getApplicationParameters(user);
	is(r.data.user_input_form.map((f) => f['text-input'].variable),
	    ['name'], 'chat: getApplicationParameters gives the form of its ' +
	    'model_config');
	is([r.data.opening_statement,
	    r.data.suggested_questions_after_answer.enabled],
	    ['Hi there', true], 'chat: and its features');

	r = await c.createChatMessage({ name: 'Ada' }, 'first', user, false);
	is([r.data.event, r.data.mode, r.data.answer],
	    ['message', 'chat', 'echo: first'],
	    'chat: createChatMessage blocking answers');
	ok(usageOk(r.data.metadata.usage), 'chat: with the model\'s usage',
	    r.data.metadata.usage);
	const conv = r.data.conversation_id;
	const first = r.data.message_id;

	r = await c.createChatMessage({}, 'second', user, true, conv);
	let ev = await events(r);
	is(ev.filter((e) => e.event === 'message').map((e) => e.answer)
	    .join(''), 'echo: second', 'chat: createChatMessage streaming ' +
	    'sends the answer in message events');
	const end = ev.find((e) => e.event === 'message_end');
	ok(end !== undefined && end.conversation_id === conv &&
	    usageOk(end.metadata.usage), 'chat: message_end in the same ' +
	    'conversation with its usage', end);
	for (const q of ['third', 'fourth', 'fifth'])
		await c.createChatMessage({}, q, user, false, conv);

	/* every message, one page at a time, back to the first */
	const seen = [];
	let firstId = null;
	for (let i = 0; i < 10; i++) {
		r = await c.getConversationMessages(user, conv, firstId, 2);
		seen.unshift(...r.data.data.map((m) => m.query));
		if (!r.data.has_more)
			break;
		firstId = r.data.data[0].id;
	}
	is(seen, ['first', 'second', 'third', 'fourth', 'fifth'],
	    'chat: getConversationMessages pages with first_id to the end');

	r = await c.messageFeedback(first, 'like', user);
	is(r.data, { result: 'success' }, 'chat: messageFeedback');
	r = await c.getConversationMessages(user, conv, null, 5);
	is(r.data.data.find((m) => m.id === first).feedback,
	    { rating: 'like' }, 'chat: the rating shows in the messages');
	r = await c.sendRequest('GET', '/app/feedbacks');
	is(r.data.data.map((f) => [f.message_id, f.rating]),
	    [[first, 'like']], 'chat: and in the app\'s feedbacks');
	r = await failure(c.messageFeedback(first, 'like', 'sdk-eve'));
	is(r.status, 404, 'chat: another end user cannot rate it');

	await script([{ text: '["Why?","How?","When?"]' }]);
	r = await c.sendRequest('GET', `/messages/${first}/suggested`, null,
	    { user });
	is(r.data, { result: 'success', data: ['Why?', 'How?', 'When?'] },
	    'chat: suggested questions after an answer');

	/* a few more conversations, paged through to the end */
	const convs = [conv];
	for (const q of ['other one', 'other two']) {
		r = await c.createChatMessage({ name: 'Bo' }, q, user);
		convs.unshift(r.data.conversation_id);
	}
	const listed = [];
	let lastId = null;
	for (let i = 0; i < 10; i++) {
		r = await c.getConversations(user, lastId, 1);
		listed.push(...r.data.data.map((x) => x.id));
		if (!r.data.has_more)
			break;
		lastId = r.data.data[r.data.data.length - 1].id;
	}
	is(listed, convs, 'chat: getConversations pages to the end, ' +
	    'newest first');
	r = await c.sendRequest('GET', '/conversations', null,
	    { user, sort_by: 'created_at', limit: 3 });
	is(r.data.data.map((x) => x.id), [...convs].reverse(),
	    'chat: sort_by=created_at');

	r = await c.renameConversation(conv, 'Named by hand', user);
	is([r.data.id, r.data.name], [conv, 'Named by hand'],
	    'chat: renameConversation');
	await script([{ text: 'Five questions' }]);
	r = await c.renameConversation(conv, undefined, user, true);
	is(r.data.name, 'Five questions', 'chat: renameConversation with ' +
	    'auto_generate names it through the model');
	r = await c.getConversations(user, null, 20);
	is(r.data.data.find((x) => x.id === conv).name, 'Five questions',
	    'chat: the new name is listed');
	r = await failure(c.renameConversation(conv, 'x', 'sdk-eve'));
	is(r.status, 404, 'chat: another end user cannot rename it');

	r = await c.deleteConversation(conv, user);
	is(r.status, 204, 'chat: deleteConversation');
	r = await failure(c.getConversationMessages(user, conv));
	is([r.status, r.data.message], [404, 'Conversation Not Exists.'],
	    'chat: its messages are gone');

	/* updateApiKey: the same client, another app's key */
	c.updateApiKey('app-not-a-key-of-this-flowcgi');
	r = await failure(c.getApplicationParameters(user));
	is(r.status, 401, 'chat: updateApiKey to a wrong key is refused');
	c.updateApiKey(KEY.completion);
	r = await c.getApplicationParameters(user);
	is(r.data.user_input_form.map((f) => Object.keys(f)[0]),
	    ['paragraph'], 'chat: updateApiKey reaches the other app');
}

/* ====== agent-chat ====== */

async function agent() {
	const c = new ChatClient(KEY.agent, BASE);
	const user = 'sdk-ann';
	let r;

	await script([
	    { tool_calls: [{ id: 'w', name: 'weekday',
		arguments: { year: 2024, month: 1, day: 1 } }] },
	    { text: 'It was a Monday.' }]);
	r = await c.createChatMessage({}, 'What day was 2024-01-01?', user,
	    true);
	const ev = await events(r);
	/* fc_agent_runner.py: the call's thought goes out with the call,
	 * then with its result */
	const thought = ev.find((e) => e.event === 'agent_thought' &&
	    e.tool === 'weekday' && e.observation !== '');
	ok(thought !== undefined &&
	    thought.observation.includes('Monday'), 'agent: the tool call ' +
	    'comes as agent_thought with its observation', thought);
	is(ev.filter((e) => e.event === 'agent_message').map((e) => e.answer)
	    .join(''), 'It was a Monday.', 'agent: the answer comes as ' +
	    'agent_message');
	const end = ev.find((e) => e.event === 'message_end');
	ok(end !== undefined && usageOk(end.metadata.usage),
	    'agent: message_end counts both model calls', end);
	r = await failure(c.createChatMessage({}, 'x', user, false));
	is([r.status, r.data.code], [400, 'app_unavailable'],
	    'agent: blocking is refused, as in Dify');
	r = await c.sendRequest('GET', '/meta');
	ok(r.data.tool_icons.weekday !== undefined, 'agent: meta has an ' +
	    'icon for its tool', r.data);
}

/* ====== completion ====== */

async function completion() {
	const c = new CompletionClient(KEY.completion, BASE);
	const user = 'sdk-ann';
	let r;

	r = await c.createCompletionMessage({ topic: 'cats' }, user, false);
	is([r.data.event, r.data.mode, r.data.answer],
	    ['message', 'completion', 'echo: Write about cats.'],
	    'completion: createCompletionMessage blocking');
	ok(usageOk(r.data.metadata.usage), 'completion: with usage',
	    r.data.metadata.usage);
	const msg = r.data.message_id;
	r = await c.createCompletionMessage({ topic: 'dogs' }, user, true);
	const ev = await events(r);
	is(ev.filter((e) => e.event === 'message').map((e) => e.answer)
	    .join(''), 'echo: Write about dogs.', 'completion: streaming');
	r = await c.messageFeedback(msg, 'dislike', user);
	is(r.data.result, 'success', 'completion: messageFeedback');
	r = await failure(c.createCompletionMessage({}, user));
	is([r.status, r.data.code], [400, 'invalid_param'],
	    'completion: a missing required input is a clear 400');
	r = await c.sendRequest('GET', '/info');
	is([r.data.name, r.data.mode], ['SDK completion', 'completion'],
	    'completion: info');
}

/* ====== chatflow ====== */

async function chatflow() {
	const c = new ChatClient(KEY.chatflow, BASE);
	const user = 'sdk-ann';
	let r;

	r = await c.getApplicationParameters(user);
	is(r.data.user_input_form.map((f) => f['text-input'].variable),
	    ['city'], 'chatflow: getApplicationParameters');

	const form = new FormData();
	form.append('file', new Blob(['a note for the trip'],
	    { type: 'text/plain' }), 'note.txt');
	form.append('user', user);
	r = await c.fileUpload(form);
	is([r.status, r.data.name, r.data.size, r.data.extension],
	    [201, 'note.txt', 19, 'txt'], 'chatflow: fileUpload');
	const files = [{ type: 'document', transfer_method: 'local_file',
	    upload_file_id: r.data.id }];

	r = await c.createChatMessage({ city: 'Lyon' }, 'tell me', user, true,
	    null, files);
	const ev = await events(r);
	is(ev.map((e) => e.event).filter((e) => e.startsWith('workflow')),
	    ['workflow_started', 'workflow_finished'],
	    'chatflow: streaming carries the workflow events');
	is(ev.filter((e) => e.event === 'message').map((e) => e.answer)
	    .join(''), 'echo: tell me', 'chatflow: and the answer');
	const end = ev.find((e) => e.event === 'message_end');
	ok(end !== undefined && usageOk(end.metadata.usage),
	    'chatflow: message_end has the usage', end);
	const conv = end.conversation_id;
	r = await c.createChatMessage({}, 'and then', user, false, conv);
	is(r.data.answer, 'echo: and then', 'chatflow: blocking, in the ' +
	    'conversation');

	r = await c.sendRequest('GET', `/conversations/${conv}/variables`,
	    null, { user });
	is(r.data.data.map((v) => [v.name, v.value]),
	    [['last_query', 'and then'], ['turns', '2']],
	    'chatflow: its conversation variables');
	r = await failure(c.sendRequest('GET',
	    `/conversations/${conv}/variables`, null, { user: 'sdk-eve' }));
	is(r.status, 404, 'chatflow: not another end user\'s');

	/* stop: the run and the message end as stopped, no error */
	await script([{ chunks: ['a ', 'b ', 'c ', 'd ', 'e ', 'f '],
	    delay: 0.4 }]);
	r = await c.createChatMessage({}, 'slowly', user, true, conv);
	const stopped = [];
	let stopAsked = null;
	let buf = '';
	for await (const chunk of r.data) {
		const lines = (buf + chunk.toString()).split('\n');

		buf = lines.pop();	/* a line not yet whole */
		for (const l of lines) {
			if (!l.startsWith('data: '))
				continue;
			const e = JSON.parse(l.slice(6));
			stopped.push(e);
			if (e.event === 'message' && stopAsked === null)
				stopAsked = c.sendRequest('POST',
				    `/chat-messages/${e.task_id}/stop`,
				    { user });
		}
	}
	is((await stopAsked).data, { result: 'success' }, 'chatflow: stop');
	is(stopped.find((e) => e.event === 'workflow_finished').data.status,
	    'stopped', 'chatflow: the stopped run says stopped');
	is(stopped.filter((e) => e.event === 'error').length, 0,
	    'chatflow: no error event');
}

/* ====== workflow ====== */

async function workflow() {
	const c = new CompletionClient(KEY.workflow, BASE);
	const user = 'sdk-ann';
	let r;

	r = await c.getApplicationParameters(user);
	is(r.data.user_input_form.map((f) => f['text-input'].variable),
	    ['topic'], 'workflow: getApplicationParameters');
	r = await c.runWorkflow({ topic: 'owls' }, user, false);
	is([r.data.data.status, r.data.data.outputs.text],
	    ['succeeded', 'echo: Write about owls.'],
	    'workflow: runWorkflow blocking');
	ok(r.data.data.total_tokens > 0, 'workflow: counts tokens',
	    r.data.data);
	const run = r.data.workflow_run_id;
	r = await c.runWorkflow({ topic: 'bats' }, user, true);
	const ev = await events(r);
	const fin = ev.find((e) => e.event === 'workflow_finished');
	is([fin.data.status, fin.data.outputs.text],
	    ['succeeded', 'echo: Write about bats.'],
	    'workflow: runWorkflow streaming');
	r = await c.sendRequest('GET', `/workflows/run/${run}`);
	is([r.data.id, r.data.status, r.data.inputs.topic],
	    [run, 'succeeded', 'owls'], 'workflow: the run\'s detail');
	r = await c.sendRequest('GET', '/workflows/logs', null,
	    { limit: 1 });
	is([r.data.total, r.data.has_more, r.data.data.length,
	    r.data.data[0].created_by_end_user.session_id],
	    [2, true, 1, user], 'workflow: logs');
	r = await c.sendRequest('GET', '/workflows/logs', null,
	    { page: 2, limit: 1 });
	is([r.data.has_more, r.data.data[0].workflow_run.id],
	    [false, run], 'workflow: logs page to the end');
	r = await c.sendRequest('GET', '/site');
	is(r.data.title, 'SDK workflow', 'workflow: site');
	r = await failure(c.createCompletionMessage({ topic: 'x' }, user));
	is([r.status, r.data.code], [400, 'app_unavailable'],
	    'workflow: not a completion app');
}

/* DifyClient itself: the methods every client shares. */
async function base() {
	const c = new DifyClient(KEY.workflow, BASE);
	const r = await c.getApplicationParameters('sdk-ann');
	is(r.data.system_parameters.file_size_limit, 15,
	    'DifyClient: getApplicationParameters');
}

try {
	await base();
	await chat();
	await agent();
	await completion();
	await chatflow();
	await workflow();
} catch (e) {
	ok(false, 'the scenario ran to its end: ' + (e.stack || e));
	if (e.response !== undefined)
		console.log('#   answer: ' + e.response.status + ' ' +
		    JSON.stringify(e.response.data));
}
console.log(`# ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
