// sdk_scenario.mjs — drives tests/fakes/fake_e2b.py with the official e2b
// JavaScript SDK (pinned in package.json) to prove the fake speaks E2B's
// protocol: create, run a command, write and read a file, list a folder,
// a failing command, a command timeout, list sandboxes, kill. Prints TAP.
//
//	FAKE_E2B=http://127.0.0.1:PORT node sdk_scenario.mjs
//
// The SDK is pointed at the fake the way its ConnectionConfig allows
// (dist/index.mjs): E2B_API_URL replaces the control-plane base URL and
// E2B_SANDBOX_URL replaces the envd base URL; the SDK then still sends
// E2b-Sandbox-Id / E2b-Sandbox-Port on every envd request (the shared-host
// form), which is how the fake routes. E2B_DEBUG stays off (it would skip
// the control plane altogether).
const base = process.env.FAKE_E2B
if (!base) {
	console.log('not ok 1 - FAKE_E2B is not set')
	process.exit(1)
}
process.env.E2B_API_URL = base
process.env.E2B_SANDBOX_URL = base
process.env.E2B_API_KEY = process.env.E2B_API_KEY ||
	'e2b_0000000000000000000000000000000000000000'
delete process.env.E2B_DEBUG
delete process.env.E2B_DOMAIN

const { Sandbox, CommandExitError } = await import('e2b')

let n = 0
let failed = 0
function ok(cond, what, extra) {
	n++
	if (cond) console.log(`ok ${n} - ${what}`)
	else {
		failed++
		console.log(`not ok ${n} - ${what}`)
		if (extra !== undefined) console.log(`#   ${JSON.stringify(extra)}`)
	}
}

async function requests() {
	const r = await fetch(`${base}/_requests`)
	return r.json()
}

let sbx
try {
	sbx = await Sandbox.create('base', { timeoutMs: 120000 })
	ok(typeof sbx.sandboxId === 'string' && sbx.sandboxId.length > 0,
		'create returns a sandbox id')
	let reqs = await requests()
	const create = reqs.find((r) => r.method === 'POST' &&
		/\/sandboxes$/.test(r.path))
	ok(create && create.body.templateID === 'base' && create.body.timeout === 120,
		'create sent templateID and timeout in seconds', create && create.body)

	const r = await sbx.commands.run('echo hi; echo oops >&2; printf "%s" "$FOO"',
		{ envs: { FOO: 'bar' } })
	ok(r.exitCode === 0, 'command exit code 0', r.exitCode)
	ok(r.stdout === 'hi\nbar', 'command stdout', r.stdout)
	ok(r.stderr === 'oops\n', 'command stderr', r.stderr)
	reqs = await requests()
	const start = reqs.filter((q) => q.path === '/process.Process/Start').pop()
	ok(start && start.headers['e2b-sandbox-id'] === sbx.sandboxId &&
		start.headers['x-access-token'] &&
		start.headers['content-type'] === 'application/connect+json',
	'Start went to envd with the sandbox id, the access token and connect+json',
	start && start.headers)
	ok(start && start.raw_hex.startsWith('00') &&
		parseInt(start.raw_hex.slice(2, 10), 16) === start.raw_hex.length / 2 - 5,
	'the SDK framed its request as one 5-byte envelope')
	ok(start && start.body[0].process.cmd === '/bin/bash' &&
		start.body[0].process.args[1] === '-c',
	'the SDK runs /bin/bash -l -c', start && start.body)

	try {
		await sbx.commands.run('echo bad >&2; exit 3')
		ok(false, 'a failing command throws CommandExitError')
	} catch (e) {
		ok(e instanceof CommandExitError && e.exitCode === 3 &&
			e.stderr === 'bad\n', 'a failing command throws CommandExitError (exit 3)',
		String(e))
	}

	try {
		await sbx.commands.run('sleep 5', { timeoutMs: 500 })
		ok(false, 'a command past its timeout fails')
	} catch (e) {
		ok(/deadline|timeout/i.test(String(e)), 'a command past its timeout fails',
			String(e))
	}

	const info = await sbx.files.write('/home/user/dir/hello.txt', 'hello file\n')
	ok(info && info.path === '/home/user/dir/hello.txt', 'write returns the path',
		info)
	const text = await sbx.files.read('/home/user/dir/hello.txt')
	ok(text === 'hello file\n', 'read back what was written', text)
	const cat = await sbx.commands.run('cat dir/hello.txt')
	ok(cat.stdout === 'hello file\n', 'the command sees the written file', cat.stdout)
	await sbx.commands.run('mkdir -p dir/sub && printf abc > dir/sub/x.bin')
	const list = await sbx.files.list('/home/user/dir', { depth: 2 })
	const names = list.map((e) => `${e.path}:${e.type}:${e.size}`).sort()
	const subSize = (list.find((e) => e.name === 'sub') || {}).size
	ok(JSON.stringify(names) === JSON.stringify([
		'/home/user/dir/hello.txt:file:11', `/home/user/dir/sub:dir:${subSize}`,
		'/home/user/dir/sub/x.bin:file:3'].sort()), 'list with depth 2', names)
	ok(await sbx.files.exists('/home/user/dir/sub/x.bin'), 'exists (Stat)')
	ok(!(await sbx.files.exists('/home/user/nope')), 'exists is false for a missing path')
	try {
		await sbx.files.read('/home/user/nope')
		ok(false, 'reading a missing file fails')
	} catch (e) {
		ok(/not.?found|does not exist/i.test(String(e)), 'reading a missing file fails',
			String(e))
	}

	const page = await Sandbox.list().nextItems()
	ok(page.some((s) => s.sandboxId === sbx.sandboxId), 'Sandbox.list has it')
	ok(await sbx.isRunning(), 'isRunning (GET /health)')
	await sbx.setTimeout(60000)
	reqs = await requests()
	ok(reqs.some((q) => q.path === `/sandboxes/${sbx.sandboxId}/timeout` &&
		q.body.timeout === 60), 'setTimeout posts /timeout in seconds')

	ok(await sbx.kill() === true, 'kill')
	ok(await Sandbox.kill(sbx.sandboxId) === false, 'a second kill finds nothing')
	sbx = undefined
} catch (e) {
	ok(false, 'the scenario ran without an exception', String(e && e.stack || e))
} finally {
	if (sbx) await sbx.kill().catch(() => {})
}
console.log(`1..${n}`)
console.log(`# ${n - failed} passed, ${failed} failed`)
process.exit(failed === 0 && n > 0 ? 0 : 1)
