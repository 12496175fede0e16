// form.js — the completion (/completion/{code}) and workflow
// (/workflow/{code}) pages: the start form, run, the result streamed in as
// Markdown, stop, and the workflow's steps when the site shows them; on a
// completion page, save a result, more like this, and the saved list.

import { call, stream } from './api.js';
import { t, toggleLanguage } from './i18n.js';
import { h, clear } from './dom.js';
import { render } from './markdown.js';
import { inputForm, formValues } from './inputs.js';
import { fmtTime, save } from '../ui/components.js';

export function formView(ctx) {
  const { root, s, parameters, url, kind } = ctx;
  const workflow = kind === 'workflow';
  const form = inputForm(parameters.user_input_form || [], url.inputs, 'in');
  const runBtn = h('button.primary.run', { type: 'submit' }, t('run'));
  const clearBtn = h('button.secondary', { type: 'reset' }, t('clear'));
  form.append(h('div.buttons', {}, clearBtn, runBtn));
  const result = h('div.result.body', { 'aria-live': 'polite' });
  const actions = h('div.buttons.result-actions');
  const savedList = h('ul.saved-list');
  const steps = h('ol.steps');
  const out = h('section.output', { 'aria-label': t('result') }, h('h2', {}, t('result')),
    workflow && s.show_workflow_steps ? h('details.steps-box', {}, h('summary', {}, t('steps')), steps) : null, result,
    actions);
  const saved = workflow ? null : h('section.saved', { 'aria-label': t('saved') }, h('h2', {}, t('saved')), savedList);
  const langBtn = h('button.icon.lang', { type: 'button', onclick: () => { toggleLanguage(); formView(ctx); } }, t('language'));
  clear(root).append(h('div.form-layout', {},
    h('header.top', {}, s.icon_type === 'emoji' && s.icon ? h('span.avatar', {}, s.icon) : null, h('h1', {}, s.title || ''), langBtn),
    s.description ? h('p.description', {}, s.description) : null,
    h('section.input-card', {}, form), out, saved,
    s.copyright ? h('p.copyright', {}, '© ' + s.copyright) : null));
  let task = null, busy = false;

  async function stop() {
    if (task) await call('POST', (workflow ? '/workflows/tasks/' : '/completion-messages/') + task + '/stop', {}).catch(() => {});
  }

  // the saved results of this end user, each with its delete
  async function loadSaved() {
    if (workflow) return;
    const page = await call('GET', '/saved-messages').catch(() => null);
    clear(savedList);
    for (const m of (page && page.data) || []) {
      const del = h('button.secondary', { type: 'button', onclick: async () => {
        await call('DELETE', '/saved-messages/' + m.id).catch(() => {});
        loadSaved();
      } }, t('delete'));
      const li = h('li.saved-item', { 'data-id': m.id }, h('div.body'), h('time.when', {}, fmtTime(m.created_at)), del);
      li.firstChild.innerHTML = render(m.answer || '');
      savedList.append(li);
    }
  }

  // the buttons under a result: a workflow's outputs to download (as
  // JSON), a completion's (message id) save and more like this
  function resultActions(id, outputs) {
    clear(actions);
    if (workflow && outputs) {
      actions.append(h('button.secondary.download', { type: 'button', onclick: () =>
        save(new Blob([JSON.stringify(outputs, null, 2)], { type: 'application/json' }), 'outputs.json') }, t('download')));
      return;
    }
    if (workflow || !id) return;
    actions.append(h('button.secondary.save', { type: 'button', onclick: async (e) => {
      await call('POST', '/saved-messages', { message_id: id }).catch(() => {});
      e.target.textContent = t('saved');
      e.target.disabled = true;
      loadSaved();
    } }, t('save')));
    if (parameters.more_like_this && parameters.more_like_this.enabled)
      actions.append(h('button.secondary.more', { type: 'button', onclick: () =>
        run('/messages/' + id + '/more-like-this?response_mode=streaming', null) }, t('moreLikeThis')));
  }

  // streams a run (path, body; null body: a GET) into the result
  async function run(path, body) {
    busy = true;
    runBtn.textContent = t('stop');
    clear(steps);
    clear(actions);
    result.textContent = t('thinking');
    let text = '', msg = null, outputs = null;
    try {
      await stream(path, body, (ev) => {
        if (ev.task_id) task = ev.task_id;
        const d = ev.data || {};
        if (ev.event === 'message' || ev.event === 'text_chunk') {
          text += ev.answer !== undefined ? ev.answer : (d.text || '');
          result.innerHTML = render(text);
        } else if (ev.event === 'message_end') {
          msg = ev.message_id || ev.id;
        } else if (ev.event === 'node_started') {
          steps.append(h('li.step', { 'data-node': d.node_id }, (d.title || d.node_type) + ' …'));
        } else if (ev.event === 'node_finished') {
          const li = steps.querySelector('[data-node="' + CSS.escape(d.node_id || '') + '"]');
          if (li) li.textContent = (d.title || d.node_type) + ' — ' + d.status;
        } else if (ev.event === 'workflow_finished') {
          outputs = d.error ? null : d.outputs || {};
          if (d.error) result.append(h('p.error', { role: 'alert' }, d.error));
          else if (!text) {
            const o = d.outputs || {};
            const vals2 = Object.values(o);
            result.innerHTML = render(vals2.length === 1 && typeof vals2[0] === 'string' ? vals2[0] : '```json\n' + JSON.stringify(o, null, 2) + '\n```');
          }
        } else if (ev.event === 'error') {
          result.append(h('p.error', { role: 'alert' }, ev.message || t('error')));
        }
      });
    } catch (err) {
      result.textContent = '';
      result.append(h('p.error', { role: 'alert' }, err.message || t('error')));
    }
    if (result.textContent === t('thinking')) result.textContent = '';
    busy = false;
    task = null;
    runBtn.textContent = t('run');
    resultActions(msg, outputs);
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (busy) return stop();
    const vals = formValues(form, parameters.user_input_form || []);
    form.querySelector('.form-error').textContent = vals.error || '';
    if (vals.error) return;
    await run(workflow ? '/workflows/run' : '/completion-messages',
      workflow ? { inputs: vals.values } : { inputs: vals.values, query: '', response_mode: 'streaming' });
  });
  loadSaved();
}
