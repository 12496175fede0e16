// chat.js — the chat page (/chat/{code}) and the embedded chatbot
// (/chatbot/{code}): the conversation list (new, pin, rename, delete), the
// start form before the first message, the opening statement and
// suggested questions, the answer streamed in as Markdown, agent thoughts
// folded, stop, feedback, regenerate, citations under an answer, files
// (uploaded or by link) attached when the app allows them, an answer read
// aloud and a question spoken where the app enables them.

import { call, stream, upload, uploadUrl } from './api.js';
import { speak, recorder } from './audio.js';
import { t, toggleLanguage } from './i18n.js';
import { h, clear, icon } from './dom.js';
import { render } from './markdown.js';
import { inputForm, formValues } from './inputs.js';
import { fmtSize } from '../ui/components.js';

export function chatView(ctx) {
  const { root, s, parameters, url, flash, ask } = ctx;
  const st = { convs: [], conv: null, busy: null, task: null, inputs: { ...url.inputs } };
  const list = h('ul.convs', { 'aria-label': t('conversations') });
  const log = h('div.messages', { role: 'log', 'aria-live': 'polite' });
  const text = h('textarea', { id: 'query', rows: '1', placeholder: s.input_placeholder || t('placeholder'), 'aria-label': t('placeholder') });
  const sendBtn = h('button.primary.send', { type: 'submit' }, t('send'));
  // files: when the app's file_upload allows them, uploaded at once and
  // sent with the next message
  const fu = parameters.file_upload || {};
  const filesOn = fu.enabled || (fu.image && fu.image.enabled);
  const attached = h('ul.attached');
  const picker = h('input', { type: 'file', id: 'attach', class: 'visually-hidden', multiple: true });
  picker.addEventListener('change', async () => {
    for (const f of picker.files) {
      const li = h('li.file.uploading', {}, f.name);
      attached.append(li);
      try {
        const up = await upload(f);
        li.dataset.id = up.id;
        li.dataset.type = /^image\//.test(up.mime_type || '') ? 'image' : 'document';
        li.classList.remove('uploading');
        if (up.size) li.append(h('span.size', {}, ' ' + fmtSize(up.size)));
        li.append(h('button.icon.file-remove', { type: 'button', 'aria-label': t('remove'), title: t('remove'), onclick: () => li.remove() }, '×'));
      } catch (e) {
        li.classList.add('error');
        li.textContent = f.name + ': ' + (e.message || t('error'));
      }
    }
    picker.value = '';
  });
  const attachBtn = filesOn ? h('label.icon.attach', { for: 'attach', title: t('attach'), 'aria-label': t('attach') }, icon('attach')) : null;
  // a file by its link (Dify's remote_url), kept through /api/remote-files/upload
  const methods = fu.allowed_file_upload_methods || (fu.image && fu.image.transfer_methods) || [];
  const linkBtn = filesOn && methods.includes('remote_url') ? h('button.icon.attach-link', { type: 'button', title: t('fileLink'), 'aria-label': t('fileLink'), onclick: attachLink }, icon('link')) : null;
  async function attachLink() {
    const u = await ask({ title: t('fileLink'), input: '', label: 'URL', ok: t('attach') });
    if (!u) return;
    const li = h('li.file.uploading', {}, u.replace(/[?#].*$/, '').split('/').pop() || u);
    attached.append(li);
    try {
      const up = await uploadUrl(u);
      li.dataset.id = up.id;
      li.dataset.url = u;
      li.dataset.transfer = 'remote_url';
      li.dataset.type = /^image\//.test(up.mime_type || '') ? 'image' : 'document';
      li.classList.remove('uploading');
      if (up.size) li.append(h('span.size', {}, ' ' + fmtSize(up.size)));
      li.append(h('button.icon.file-remove', { type: 'button', 'aria-label': t('remove'), title: t('remove'), onclick: () => li.remove() }, '×'));
    } catch (e) {
      li.classList.add('error');
      li.textContent = u + ': ' + (e.message || t('error'));
    }
  }
  // a question spoken: recorded, then its text in the box
  const stt = parameters.speech_to_text && parameters.speech_to_text.enabled ? recorder() : null;
  const micBtn = stt ? h('button.icon.mic', { type: 'button', title: t('record'), 'aria-label': t('record'), 'aria-pressed': 'false', onclick: toggleMic }, icon('mic')) : null;
  async function toggleMic() {
    try {
      if (!stt.recording()) {
        await stt.start();
        micBtn.setAttribute('aria-pressed', 'true');
        micBtn.setAttribute('aria-label', t('stopRecording'));
        return;
      }
      micBtn.setAttribute('aria-pressed', 'false');
      micBtn.setAttribute('aria-label', t('record'));
      const said = await stt.stop();
      text.value = (text.value ? text.value + ' ' : '') + said;
      text.focus();
    } catch (e) {
      flash(t('error') + ': ' + e.message, 'error');
    }
  }
  const composer = h('form.composer', { onsubmit: (e) => { e.preventDefault(); send(text.value); } },
    filesOn ? picker : null, attachBtn, linkBtn, micBtn, text, sendBtn);
  const side = h('aside.sidebar', { id: 'sidebar' },
    h('button.new', { type: 'button', onclick: () => { openConv(null); side.classList.remove('open'); } }, '+ ' + t('newChat')),
    h('h2.convs-title', {}, t('conversations')), list);
  const menuBtn = h('button.icon.menu', { type: 'button', 'aria-label': t('menu'), 'aria-controls': 'sidebar', onclick: () => side.classList.toggle('open') }, icon('menu'));
  const langBtn = h('button.icon.lang', { type: 'button', onclick: () => { toggleLanguage(); chatView(ctx); } }, t('language'));
  const header = h('header.top', {}, menuBtn, s.icon_type === 'emoji' && s.icon ? h('span.avatar', { style: s.icon_background ? 'background:' + s.icon_background : null }, s.icon) : null,
    h('h1', {}, s.title || ''), langBtn);
  if (ctx.embedded && window.parent !== window) {
    header.append(h('button.icon.expand', { type: 'button', 'aria-label': 'Expand', onclick: () => window.parent.postMessage({ type: 'dify-chatbot-expand-change' }, '*') }, '⤢'));
    window.parent.postMessage({ type: 'dify-chatbot-iframe-ready' }, '*');
  }
  const main = h('main.chat-main', {}, header, log, filesOn ? attached : null, composer,
    s.custom_disclaimer ? h('p.disclaimer', {}, s.custom_disclaimer) : null,
    s.copyright ? h('p.copyright', {}, '© ' + s.copyright) : null);
  clear(root).append(h('div.chat-layout' + (ctx.embedded ? '.embedded' : ''), {}, side, main));
  text.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && new URLSearchParams(location.search).get('sendOnEnter') !== 'false') {
      e.preventDefault();
      send(text.value);
    }
  });

  async function loadConvs() {
    try {
      const r = await call('GET', '/conversations?limit=100');
      st.convs = r.data || [];
    } catch (e) { st.convs = []; }
    clear(list);
    st.convs.sort((a, b) => (b.pinned ? 1 : 0) - (a.pinned ? 1 : 0));
    for (const c of st.convs) {
      const item = h('li.conv' + (c.id === st.conv ? '.current' : '') + (c.pinned ? '.pinned' : ''), { 'data-id': c.id },
        h('button.conv-open', { type: 'button', 'aria-current': c.id === st.conv ? 'true' : null, onclick: () => { openConv(c.id); side.classList.remove('open'); } }, c.name || t('newChat')),
        h('button.icon.conv-pin', { type: 'button', 'aria-label': c.pinned ? t('unpin') : t('pin'), title: c.pinned ? t('unpin') : t('pin'), 'aria-pressed': c.pinned ? 'true' : 'false', onclick: () => pin(c) }, icon('pin')),
        h('button.icon.conv-rename', { type: 'button', 'aria-label': t('rename'), title: t('rename'), onclick: () => rename(c) }, icon('edit')),
        h('button.icon.conv-delete', { type: 'button', 'aria-label': t('delete'), title: t('delete'), onclick: () => remove(c) }, icon('trash')));
      list.append(item);
    }
  }

  // a call whose failure is shown in the flash line; resolves false then
  async function tryCall(method, path, body) {
    try {
      await call(method, path, body);
      return true;
    } catch (e) {
      flash(t('error') + ': ' + e.message, 'error');
      return false;
    }
  }

  async function pin(c) {
    if (await tryCall('PATCH', '/conversations/' + c.id + (c.pinned ? '/unpin' : '/pin'))) loadConvs();
  }

  async function rename(c) {
    const name = await ask({ title: t('rename'), input: c.name || '', label: t('newName'), ok: t('rename') });
    if (!name) return;
    if (await tryCall('POST', '/conversations/' + c.id + '/name', { name, auto_generate: false })) loadConvs();
  }

  async function remove(c) {
    if (!await ask({ title: t('delete'), text: t('confirmDelete'), ok: t('delete'), danger: true })) return;
    if (!await tryCall('DELETE', '/conversations/' + c.id, {})) return;
    if (st.conv === c.id) openConv(null);
    else loadConvs();
  }

  function bubble(role, content) {
    const body = h('div.body');
    if (role === 'user') body.textContent = content;
    else body.innerHTML = render(content); // render() escapes everything
    const el = h('div.msg.' + role, {}, role === 'bot' && s.use_icon_as_answer_icon && s.icon ? h('span.avatar', {}, s.icon) : null, body);
    log.append(el);
    log.scrollTop = log.scrollHeight;
    return { el, body };
  }

  // the sources an answer drew on (Dify's retriever_resources), folded
  function citations(el, res) {
    if (!res || !res.length) return;
    el.append(h('details.citations', {}, h('summary', {}, t('citations') + ' (' + res.length + ')'),
      h('ol', {}, res.map((c) => h('li.citation', { title: c.content || '' },
        h('span.doc', {}, c.document_name || c.dataset_name || ''),
        c.content ? h('p.quote', {}, c.content.length > 300 ? c.content.slice(0, 300) + '…' : c.content) : null)))));
  }

  // the buttons under an answer: feedback, read aloud (the app's
  // text_to_speech), regenerate (the latest answer only)
  function feedback(el, id, rating) {
    for (const b of log.querySelectorAll('.regenerate')) b.remove();
    const bar = h('div.actions');
    for (const [r, label] of [['like', t('like')], ['dislike', t('dislike')]]) {
      const b = h('button.icon.fb-' + r, { type: 'button', 'aria-label': label, title: label, 'aria-pressed': rating === r ? 'true' : 'false' }, icon(r));
      b.addEventListener('click', async () => {
        const next = b.getAttribute('aria-pressed') === 'true' ? null : r;
        await call('POST', '/messages/' + id + '/feedbacks', { rating: next });
        for (const x of bar.querySelectorAll('button')) x.setAttribute('aria-pressed', 'false');
        if (next) b.setAttribute('aria-pressed', 'true');
      });
      bar.append(b);
    }
    if (parameters.text_to_speech && parameters.text_to_speech.enabled)
      bar.append(h('button.icon.tts', { type: 'button', 'aria-label': t('play'), title: t('play'), onclick: () =>
        speak(id).catch((e) => flash(t('error') + ': ' + e.message, 'error')) }, icon('speaker')));
    if (st.last)
      bar.append(h('button.icon.regenerate', { type: 'button', 'aria-label': t('regenerate'), title: t('regenerate'), onclick: regenerate }, '↻'));
    el.append(bar);
  }

  // asks the latest question again: its answer (and the question) give
  // way to the new one
  function regenerate() {
    if (!st.last || st.busy) return;
    const bots = log.querySelectorAll('.msg.bot:not(.opening)');
    const users = log.querySelectorAll('.msg.user');
    if (bots.length) bots[bots.length - 1].remove();
    if (users.length) users[users.length - 1].remove();
    send(st.last.q, st.last.files);
  }

  function thoughts(el) {
    let d = el.querySelector('details.thoughts');
    if (!d) {
      d = h('details.thoughts', {}, h('summary', {}, t('tool')));
      el.insertBefore(d, el.querySelector('.body'));
    }
    return d;
  }

  function welcome() {
    const form = parameters.user_input_form || [];
    if (form.length) {
      const f = inputForm(form, st.inputs, 'start');
      log.append(h('section.start-form', { 'aria-label': t('start') }, f));
    }
    if (parameters.opening_statement) {
      const text = parameters.opening_statement.replace(/\{\{\s*([\w.]+)\s*\}\}/g, (_, k) => st.inputs[k] || '');
      bubble('bot', text).el.classList.add('opening');
    }
    const qs = parameters.suggested_questions || [];
    if (qs.length) log.append(h('div.suggested', { 'aria-label': t('suggested') }, qs.map((q) => h('button.chip', { type: 'button', onclick: () => send(q) }, q))));
  }

  async function openConv(id) {
    if (st.busy) st.busy.abort();
    st.conv = id;
    clear(log);
    loadConvs();
    if (!id) { welcome(); text.focus(); return; }
    const r = await call('GET', '/messages?conversation_id=' + encodeURIComponent(id) + '&limit=100');
    const msgs = r.data || [];
    st.last = null;
    for (const [i, m] of msgs.entries()) {
      if (i === msgs.length - 1) st.last = { q: m.query, files: [] };
      const ub = bubble('user', m.query);
      const mf = (m.message_files || []).filter((f) => f.belongs_to !== 'assistant');
      if (mf.length) ub.el.append(h('ul.msg-files', {}, mf.map((f) => h('li.file', {}, f.filename || f.name || f.id))));
      const b = bubble('bot', m.answer);
      for (const th of m.agent_thoughts || []) if (th.tool) thoughts(b.el).append(h('div.thought', {}, th.tool + ': ' + (th.observation || '')));
      citations(b.el, m.retriever_resources);
      feedback(b.el, m.id, m.feedback && m.feedback.rating);
    }
  }

  function setBusy(on) {
    sendBtn.textContent = on ? t('stop') : t('send');
    sendBtn.classList.toggle('stop', on);
    sendBtn.type = on ? 'button' : 'submit';
    sendBtn.onclick = on ? stop : null;
  }

  async function stop() {
    if (st.task) await call('POST', '/chat-messages/' + st.task + '/stop', {}).catch(() => {});
  }

  // sends question q with the attached files (again is a regenerated
  // question's files)
  async function send(q, again) {
    q = (q || '').trim();
    if (!q || st.busy) return;
    const startForm = log.querySelector('.start-form form');
    if (startForm) {
      const vals = formValues(startForm, parameters.user_input_form || []);
      if (vals.error) { startForm.querySelector('.form-error').textContent = vals.error; return; }
      st.inputs = { ...st.inputs, ...vals.values };
      log.querySelector('.start-form').remove();
    }
    for (const el of log.querySelectorAll('.suggested')) el.remove();
    text.value = '';
    const files = again || [...attached.querySelectorAll('li.file[data-id]')].map((li) =>
      (li.dataset.transfer === 'remote_url'
        ? { type: li.dataset.type, transfer_method: 'remote_url', url: li.dataset.url, upload_file_id: li.dataset.id, name: li.firstChild.textContent }
        : { type: li.dataset.type, transfer_method: 'local_file', upload_file_id: li.dataset.id, name: li.firstChild.textContent }));
    if (!again) clear(attached);
    st.last = { q, files };
    const ub = bubble('user', q);
    if (files.length) ub.el.append(h('ul.msg-files', {}, files.map((f) => h('li.file', {}, f.name))));
    const b = bubble('bot', '');
    b.el.classList.add('streaming');
    b.body.textContent = t('thinking');
    let answer = '', msgId = null, sources = null;
    const ctl = new AbortController();
    st.busy = ctl;
    setBusy(true);
    const shown = new Map();
    try {
      await stream('/chat-messages', { inputs: st.inputs, query: q, response_mode: 'streaming', conversation_id: st.conv || '',
        files: files.map(({ name, ...f }) => f) }, (ev) => {
        if (ev.task_id) st.task = ev.task_id;
        if (ev.event === 'message' || ev.event === 'agent_message') {
          answer += ev.answer || '';
          b.body.innerHTML = render(answer);
          log.scrollTop = log.scrollHeight;
        } else if (ev.event === 'message_replace') {
          answer = ev.answer || '';
          b.body.innerHTML = render(answer);
        } else if (ev.event === 'agent_thought' && ev.tool) {
          // a thought comes again as it grows (its calls, then their
          // results): one line per thought id, the latest state shown
          let line = shown.get(ev.id);
          if (!line) {
            line = h('div.thought', {});
            shown.set(ev.id, line);
            thoughts(b.el).append(line);
          }
          line.textContent = ev.tool + ': ' + (ev.observation || '');
        } else if (ev.event === 'message_end') {
          msgId = ev.message_id || ev.id;
          sources = ev.metadata && ev.metadata.retriever_resources;
          if (!st.conv && ev.conversation_id) st.conv = ev.conversation_id;
        } else if (ev.event === 'error') {
          b.el.append(h('p.error', { role: 'alert' }, ev.message || t('error')));
        }
        if (!st.conv && ev.conversation_id) st.conv = ev.conversation_id;
      }, ctl.signal);
    } catch (e) {
      if (e.name !== 'AbortError') b.el.append(h('p.error', { role: 'alert' }, e.message || t('error')));
    }
    if (!answer) b.body.textContent = '';
    b.el.classList.remove('streaming');
    citations(b.el, sources);
    if (msgId) feedback(b.el, msgId, null);
    st.busy = null;
    st.task = null;
    setBusy(false);
    loadConvs();
  }

  openConv(null);
}
