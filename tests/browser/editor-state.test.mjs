#!/usr/bin/env node
/*
 * editor-state.test.mjs — fcgi/ui/editor.js without a browser (it knows no
 * DOM): the operations on a draft, undo/redo, the refusals of connect, what
 * a node reads upstream, the autosave's hash and its stale answer. Prints
 * "ok - ..." / "not ok - ..." lines for tests/e2e/t_admin_editor.sh.
 */
import { createEditor, autosaver, sourceHandles } from
    '../../fcgi/ui/editor.js';
import { check } from '../../fcgi/ui/checklist.js';

let failed = 0;
function ok(cond, what, detail) {
	console.log((cond ? 'ok - ' : 'not ok - ') + what);
	if (!cond) {
		failed++;
		if (detail !== undefined)
			console.log('#   got: ' + JSON.stringify(detail));
	}
}

const draft = { graph: { nodes: [], edges: [] }, environment_variables:
    [{ name: 'region', value_type: 'string', value: 'eu' }], hash: 'h0' };
const why = [];
const ed = createEditor(draft, (w) => why.push(w));
const blank = JSON.stringify(ed.doc.graph);
const s = ed.addNode('start', { x: 0, y: 0 });
const l = ed.addNode('llm', { x: 300, y: 0 });
const i = ed.addNode('if-else', { x: 600, y: 0 });
const t = ed.addNode('template-transform', { x: 900, y: 0 });
ed.setData(s, (d) => {
	d.variables = [{ variable: 'query', type: 'text-input' }];
});
ok(ed.connect(s, 'source', l) && ed.connect(l, 'source', i) &&
    ed.connect(i, 'false', t), 'start -> llm -> if-else -ELSE-> template');
ok(draft.graph.nodes.length === 0, 'the editor works on a copy of the draft');
ok(ed.connect(l, 'source', s) === null, 'an edge into a start is refused');
ok(ed.connect(t, 'source', l) === null, 'an edge back upstream is refused');
ok(ed.connect(i, 'false', t) === null, 'the same edge twice is refused');
ok(ed.connect(i, 'nope', t) === null, 'a handle the node has not is refused');
ok(JSON.stringify(sourceHandles(ed.node(i))) === '["true","false"]',
    'an if-else\'s handles: its case, then ELSE');
const vs = ed.variables(t).map((v) => v.label + ':' + v.type);
ok(vs.includes('Start.query:string') && vs.includes('LLM.text:string') &&
    vs.includes('env.region:string') && vs.includes('sys.user_id:string') &&
    !vs.some((v) => v.startsWith('Template')), 'the template reads the ' +
    'outputs upstream, system and environment variables, not its own', vs);
ok(!ed.variables(l).some((v) => v.label.startsWith('IF/ELSE') ||
    v.label.startsWith('LLM')), 'the LLM reads nothing downstream of it');
/* removing an if-else case takes its edges along */
ed.setData(i, (d) => {
	d.cases.push({ case_id: 'c2', logical_operator: 'and',
	    conditions: [] });
});
ed.connect(i, 'c2', t);
ed.setData(i, (d) => {
	d.cases.pop();
});
ok(!ed.edges().some((e) => e.sourceHandle === 'c2'), 'a case removed ' +
    'takes its edge');
ed.removeNode(l);
ok(ed.nodes().length === 3 && ed.edges().length === 1, 'deleting the LLM ' +
    'removes its two edges');
const full = JSON.stringify(ed.doc.graph);
let n = 0;
while (ed.canUndo) {
	ed.undo();
	n++;
}
ok(JSON.stringify(ed.doc.graph) === blank && n === 12, 'undo all the way ' +
    'back is the blank draft (12 steps)', n);
while (ed.canRedo)
	ed.redo();
ok(JSON.stringify(ed.doc.graph) === full, 'redo all the way is the same ' +
    'draft again, byte for byte');
ed.move(s, { x: 0, y: 0 });
ok(why[why.length - 1] === 'redo', 'a change that changes nothing is no ' +
    'undo step');

/* the checklist: a dangling node, a variable read that is not upstream */
{
	const c = createEditor({ graph: { nodes: [], edges: [] } }, () => {});
	const cs = c.addNode('start', { x: 0, y: 0 });
	const ce = c.addNode('end', { x: 300, y: 0 });
	const ct = c.addNode('template-transform', { x: 300, y: 200 });
	c.connect(cs, 'source', ce);
	c.setData(ct, (d) => {
		d.template = 'x';
	});
	c.setData(ce, (d) => {
		d.outputs = [{ variable: 'r', value_selector: [ct, 'output'] }];
	});
	const m = check(c, 'workflow').map((p) => p.node + ' ' + p.message);
	ok(m.length === 2 && m.includes(ct + ' Template: not connected to the ' +
	    'Start node.') && m.includes(ce + ' End: reads ' + ct +
	    '.output, which is not an output upstream of it.'),
	    'the checklist flags the dangling template and the end reading it',
	    m);
	c.connect(cs, 'source', ct);
	c.connect(ct, 'source', ce);
	ok(check(c, 'workflow').length === 0, 'connected, nothing to fix',
	    check(c, 'workflow'));
	ok(check(c, 'advanced-chat').some((p) => p.message ===
	    'There is no Answer node.'), 'a chatflow wants an answer');
}

/* the autosave: sends the hash, takes the new one, reports a stale one */
const sent = [];
const states = [];
const save = async (body) => {
	sent.push(body.hash);
	if (sent.length === 2) {
		const e = new Error('stale');
		e.code = 'draft_workflow_not_sync';
		throw e;
	}
	return { hash: 'h' + sent.length };
};
const as = autosaver(ed, save, (st) => states.push(st));
await as.flush();
await as.flush();
await as.flush();
ok(JSON.stringify(sent) === '["h0","h1"]' && ed.doc.hash === 'h1',
    'each save sends the hash the last one answered', sent);
ok(as.stale && states.join(',') === 'saving,saved,saving,stale',
    'a stale hash stops the autosave and says so', states);

console.log('# editor state checks done, ' + failed + ' failed');
process.exit(failed ? 1 : 0);
