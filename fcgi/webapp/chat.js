// chat.js — the chat page (/chat/{code}) and the embedded chatbot
// (/chatbot/{code}): the conversation list (new, pin, rename, delete), the
// start form before the first message, the opening statement and
// suggested questions, the answer streamed in as Markdown, agent thoughts
// folded, stop, feedback, regenerate (Dify's message tree: a regenerated
// answer stands beside the first, "< 1/2 >" between them), citations
// under an answer, files
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
  // msgs: the conversation's messages, oldest first, each with its
  // parent_message_id; pick: which child of a parent ('' the root) shows
  const st = { convs: [], conv: null, busy: null, task: null, inputs: { ...url.inputs }, msgs: [], pick: {} };
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
  // text_to_speech), regenerate (again, as a sibling of it)
  function feedback(el, id, rating, item) {
    const bar = h('div.actions');
    for (const [r, label] of [['like', t('like')], ['dislike', t('dislike')]]) {
      const b = h('button.icon.fb-' + r, { type: 'button', 'aria-label': label, title: label, 'aria-pressed': rating === r ? 'true' : 'false' }, icon(r));
      b.addEventListener('click', async () => {
        const next = b.getAttribute('aria-pressed') === 'true' ? null : r;
        await call('POST', '/messages/' + id + '/feedbacks', { rating: next });
        for (const x of bar.querySelectorAll('button')) x.setAttribute('aria-pressed', 'false');
        if (next) b.setAttribute('aria-pressed', 'true');
        const m = st.msgs.find((x) => x.id === id);
        if (m) m.feedback = next ? { rating: next } : null;
      });
      bar.append(b);
    }
    if (parameters.text_to_speech && parameters.text_to_speech.enabled)
      bar.append(h('button.icon.tts', { type: 'button', 'aria-label': t('play'), title: t('play'), onclick: () =>
        speak(id).catch((e) => flash(t('error') + ': ' + e.message, 'error')) }, icon('speaker')));
    if (item) {
      bar.append(h('button.icon.regenerate', { type: 'button', 'aria-label': t('regenerate'), title: t('regenerate'), onclick: () => regenerate(item) }, '↻'));
      if (item.count > 1) {
        const go = (d) => { st.pick[item.key] = item.kids[item.index + d].id; draw(); };
        bar.append(h('div.siblings', { role: 'group', 'aria-label': t('answers') },
          h('button.icon.sib-prev', { type: 'button', 'aria-label': t('prevAnswer'), title: t('prevAnswer'), disabled: item.index === 0 ? true : null, onclick: () => go(-1) }, '‹'),
          h('span.sib-pos', {}, (item.index + 1) + ' / ' + item.count),
          h('button.icon.sib-next', { type: 'button', 'aria-label': t('nextAnswer'), title: t('nextAnswer'), disabled: item.index === item.count - 1 ? true : null, onclick: () => go(1) }, '›')));
      }
    }
    el.append(bar);
  }

  // Dify's buildChatItemTree: a message's parent is the one it names, the
  // one before it when it names UUID_NIL (the service API's), the root
  // when null or not among those loaded
  const NIL = '00000000-0000-0000-0000-000000000000';
  function parentKey(m, i) {
    const p = m.parent_message_id;
    if (p === NIL) return i > 0 ? st.msgs[i - 1].id : '';
    return p && st.msgs.some((x) => x.id === p) ? p : '';
  }
  // the thread shown: from the root, the picked child at each step (else
  // the newest); [{m, key, kids, index, count}]
  function thread() {
    const kids = {};
    st.msgs.forEach((m, i) => { const k = parentKey(m, i); (kids[k] = kids[k] || []).push(m); });
    const out = [];
    for (let key = '', seen = new Set(); kids[key] && !seen.has(key); key = out[out.length - 1].m.id) {
      seen.add(key);
      const list = kids[key];
      let index = list.findIndex((m) => m.id === st.pick[key]);
      if (index < 0) index = list.length - 1;
      out.push({ m: list[index], key, kids: list, index, count: list.length });
    }
    return out;
  }
  // the thread ending in message id picked at every step (the newest
  // message's after a load, as Dify's targetMessageId)
  function pickPath(id) {
    for (let m = st.msgs.find((x) => x.id === id), n = 0; m && n < st.msgs.length; n++) {
      const k = parentKey(m, st.msgs.indexOf(m));
      st.pick[k] = m.id;
      m = st.msgs.find((x) => x.id === k);
    }
  }

  // the thread as bubbles
  function draw() {
    for (const el of log.querySelectorAll('.msg:not(.opening)')) el.remove();
    for (const item of thread()) {
      const m = item.m;
      const ub = bubble('user', m.query);
      const mf = (m.message_files || []).filter((f) => f.belongs_to !== 'assistant');
      if (mf.length) ub.el.append(h('ul.msg-files', {}, mf.map((f) => h('li.file', {}, f.filename || f.name || f.id))));
      const b = bubble('bot', m.answer);
      for (const th of m.agent_thoughts || []) if (th.tool) thoughts(b.el).append(h('div.thought', {}, th.tool + ': ' + (th.observation || '')));
      citations(b.el, m.retriever_resources);
      feedback(b.el, m.id, m.feedback && m.feedback.rating, item);
    }
  }

  // asks an answer's question again after the same parent: its bubbles
  // and those after them give way, the new answer comes beside it
  function regenerate(item) {
    if (st.busy) return;
    const at = thread().findIndex((y) => y.m.id === item.m.id);
    for (const el of [...log.querySelectorAll('.msg:not(.opening)')].slice(at * 2)) el.remove();
    send(item.m.query, item.m.files || [], item.key || null);
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
    st.msgs = [];
    st.pick = {};
    clear(log);
    loadConvs();
    if (!id) { welcome(); text.focus(); return; }
        const r = await call('GET', '/messages?conversation_id=' + encodeURIComponent(id) + '&limit=100');
    if (st.conv !== id) return;	// another opened meanwhile
    st.msgs = r.data || [];
    if (st.msgs.length) pickPath(st.msgs[st.msgs.length - 1].id);
    draw();
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

  // sends question q with the attached files after the thread shown
  // (again: a regenerated question's files, after parent, null the root)
  async function send(q, again, parent) {
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
    if (!again) {
      const shown = thread();
      parent = shown.length ? shown[shown.length - 1].m.id : null;
    }
    const ub = bubble('user', q);
    if (files.length) ub.el.append(h('ul.msg-files', {}, files.map((f) => h('li.file', {}, f.name))));
    const b = bubble('bot', '');
    b.el.classList.add('streaming');
    b.body.textContent = t('thinking');
    let answer = '', msgId = null, sources = null;
    const told = [];
    const ctl = new AbortController();
    st.busy = ctl;
    setBusy(true);
    const shown = new Map();
    try {
      await stream('/chat-messages', { inputs: st.inputs, query: q, response_mode: 'streaming', conversation_id: st.conv || '',
        parent_message_id: parent, files: files.map(({ name, ...f }) => f) }, (ev) => {
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
          // results): one line and one entry per thought id, the latest
          // state shown
          let seen = shown.get(ev.id);
          if (!seen) {
            seen = { line: h('div.thought', {}), t: {} };
            shown.set(ev.id, seen);
            thoughts(b.el).append(seen.line);
            told.push(seen.t);
          }
          seen.line.textContent = ev.tool + ': ' + (ev.observation || '');
          seen.t.tool = ev.tool;
          seen.t.observation = ev.observation;
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
    if (msgId) {
      // the new message joins the tree, picked where it stands
      st.msgs.push({ id: msgId, parent_message_id: parent, query: q, answer, files, agent_thoughts: told, retriever_resources: sources,
        message_files: files.map((f) => ({ filename: f.name })) });
      st.pick[parent || ''] = msgId;
      draw();
    } else citations(b.el, sources);
    st.busy = null;
    st.task = null;
    setBusy(false);
    loadConvs();
  }

  openConv(null);
}
