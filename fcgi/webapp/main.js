// main.js — the Web App's start: which page (chat, chatbot, completion,
// workflow) from the address, the passport, the site and its parameters,
// the language, then the view.

import { kind, code, login, logout, call, urlParams, ApiError } from './api.js';
import { chooseLanguage, t } from './i18n.js';
import { h, clear } from './dom.js';
import { flasher, dialog } from '../ui/components.js';
import { chatView } from './chat.js';
import { formView } from './form.js';

const root = document.getElementById('app');
const flash = flasher(document.getElementById('flash'));
const dlgAsk = dialog(document.getElementById('dlg'));
// the dialog's Cancel in the language of the moment (it may change)
const ask = (o) => { document.getElementById('dlg-cancel').textContent = t('cancel'); return dlgAsk(o); };

function message(text) {
  clear(root).append(h('div.notice', { role: 'alert' }, text));
}

function askPasscode(onDone, wrong) {
  const input = h('input', { id: 'passcode', type: 'password', autocomplete: 'current-password', required: true });
  const form = h('form.passcode', {
    onsubmit: (e) => { e.preventDefault(); onDone(input.value); },
  }, h('label', { for: 'passcode' }, t('passcode')), input,
  wrong ? h('p.error', { role: 'alert' }, wrong) : null,
  h('button.primary', { type: 'submit' }, t('enter')));
  clear(root).append(form);
  input.focus();
}

async function start(params, passcode) {
  try {
    await login(params.sys.user_id, passcode);
  } catch (e) {
    chooseLanguage('');
    if (e instanceof ApiError && e.code === 'passcode_required') {
      askPasscode((p) => start(params, p), passcode ? e.message : '');
      return;
    }
    message(e instanceof ApiError && e.status === 404 ? t('notFound') : t('error') + ': ' + e.message);
    return;
  }
  let site, parameters;
  try {
    site = await call('GET', '/site');
    parameters = await call('GET', '/parameters');
  } catch (e) {
    // a passport of a reset code or a changed key: ask for a new one once
    if (e instanceof ApiError && !passcode && e.status === 401 || (e.status === 400 && /no longer valid/.test(e.message))) {
      logout();
      if (!start.retried) { start.retried = true; return start(params, passcode); }
    }
    chooseLanguage('');
    message(e instanceof ApiError && /disabled/.test(e.message) ? t('disabled') : t('error') + ': ' + e.message);
    return;
  }
  const s = site.site || {};
  chooseLanguage(s.default_language);
  document.title = s.title || document.title;
  if (s.chat_color_theme) document.documentElement.style.setProperty('--theme', s.chat_color_theme);
  const ctx = { root, site, s, parameters, url: params, kind, code, embedded: kind === 'chatbot', flash, ask };
  if (kind === 'completion' || kind === 'workflow') formView(ctx);
  else chatView(ctx);
}

if (!code) message('No app code in the address.');
else urlParams().then((p) => start(p));
