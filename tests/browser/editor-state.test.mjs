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

/* containers, error branches, the other node types' checks */
{
	const c = createEditor({ graph: { nodes: [], edges: [] } }, () => {});
	const st = c.addNode('start', { x: 0, y: 0 });
	const it = c.addNode('iteration', { x: 300, y: 0 });
	const itn = c.node(it);
	const first = c.node(itn.data.start_node_id);
	ok(first && first.parentId === it && first.data.type ===
	    'iteration-start' && itn.width === 508, 'an iteration comes with ' +
	    'its start node inside it', [itn, first]);
	const inner = c.addNode('code', { x: 120, y: 60 }, it);
	ok(c.node(inner).parentId === it && c.node(inner).data.iteration_id ===
	    it && c.addNode('loop', { x: 0, y: 0 }, it) === null &&
	    c.addNode('code', { x: 0, y: 0 }, inner) === null, 'a node goes ' +
	    'inside an iteration; a container does not, nor into a code node');
	c.connect(st, 'source', it);
	ok(c.connect(st, 'source', inner) === null, 'an edge across a ' +
	    'container\'s border is refused');
	const p0 = check(c, 'workflow').map((p) => p.message);
	ok(p0.includes('Code: not connected to the start of Iteration.'),
	    'the checklist flags a node its container\'s start does not ' +
	    'reach', p0);
	const e = c.connect(first.id, 'source', inner);
	ok(e && c.edges().find((x) => x.id === e).data.isInIteration === true,
	    'the edge inside is marked isInIteration');
	const vs = c.variables(inner).map((v) => v.label + ':' + v.type);
	ok(vs.includes('Iteration.item:string') &&
	    vs.includes('Iteration.index:number') &&
	    !vs.includes('Iteration.output:array[string]'), 'inside, the ' +
	    'iteration\'s item and index, not its output', vs);
	c.removeNode(first.id);
	ok(c.node(first.id), 'a container\'s start node cannot be deleted');
	c.removeNode(it);
	ok(!c.node(inner) && !c.node(first.id) && c.edges().length === 0,
	    'deleting the iteration deletes what is inside it and its edges');
	const h = c.addNode('http-request', { x: 600, y: 0 });
	c.setData(h, (d) => {
		d.error_strategy = 'fail-branch';
	});
	ok(JSON.stringify(sourceHandles(c.node(h))) ===
	    '["source","fail-branch"]' && c.variables(c.addNode('end',
	    { x: 900, y: 0 })).length >= 0, 'the fail-branch strategy adds ' +
	    'a fail-branch handle');
	const tl = c.addNode('template-transform', { x: 900, y: 200 });
	c.connect(st, 'source', h);
	c.connect(h, 'fail-branch', tl);
	ok(c.variables(tl).some((v) => v.label === 'HTTP Request.error_type'),
	    'after it, the node\'s error_message and error_type');
	const q = c.addNode('question-classifier', { x: 300, y: 300 });
	ok(JSON.stringify(sourceHandles(c.node(q))) === '["1","2"]',
	    'a classifier\'s handles are its classes');
	const kr = c.addNode('knowledge-retrieval', { x: 300, y: 500 });
	c.connect(st, 'source', kr);
	const llm = c.addNode('llm', { x: 600, y: 500 });
	c.connect(kr, 'source', llm);
	c.setData(llm, (d) => {
		d.model = { provider: 'openai', name: 'm', mode: 'chat' };
		d.prompt_template[0].text = '{{#context#}}';
	});
	const p1 = check(c, 'workflow').map((x) => x.message);
	ok(p1.includes('Knowledge Retrieval: no knowledge base is chosen.') &&
	    !p1.some((x) => /reads context/.test(x)) &&
	    !p1.some((x) => x.startsWith('LLM:')), 'the checklist asks the ' +
	    'retrieval node for a knowledge base, and takes {{#context#}} ' +
	    'as the LLM\'s context block', p1);
	const lp = c.addNode('loop', { x: 0, y: 800 });
	c.connect(st, 'source', lp);
	c.setData(lp, (d) => {
		d.loop_variables = [{ id: 'v', label: 'n', var_type: 'number',
		    value_type: 'constant', value: 0 }];
		d.break_conditions = [{ id: 'b', variable_selector: [lp, 'n'],
		    comparison_operator: '≥', value: '3', varType: 'number' }];
	});
	ok(!check(c, 'workflow').some((x) => x.node === lp), 'a loop\'s ' +
	    'break condition reads its own variable', check(c, 'workflow'));
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
