// inputs.js — the start form from Dify's user_input_form: text-input,
// paragraph, number, select, checkbox; labels, required, max length,
// options, defaults and values given in the address.

import { h } from './dom.js';
import { t } from './i18n.js';

function field(item) {
  const type = Object.keys(item)[0];
  return { type, ...item[type] };
}

export function inputForm(form, given, idp) {
  const f = h('form.inputs', { novalidate: true, onsubmit: (e) => e.preventDefault() });
  for (const item of form) {
    const v = field(item);
    if (!v.variable || v.hide) continue;
    const id = idp + '-' + v.variable;
    const label = h('label', { for: id }, (v.label || v.variable) + (v.required ? ' *' : ' (' + t('optional') + ')'));
    const val = given[v.variable] !== undefined ? given[v.variable] : (v.default || '');
    let input;
    if (v.type === 'select') {
      input = h('select', { id, name: v.variable }, h('option', { value: '' }, t('select')),
        (v.options || []).map((o) => h('option', { value: o, selected: o === val }, o)));
    } else if (v.type === 'paragraph') {
      input = h('textarea', { id, name: v.variable, rows: '3', maxlength: v.max_length || null });
      input.value = val;
    } else if (v.type === 'checkbox') {
      input = h('input', { id, name: v.variable, type: 'checkbox', checked: val === true || val === 'true' });
    } else if (v.type === 'file' || v.type === 'file-list') {
      continue; // files: not in this form yet
    } else {
      input = h('input', { id, name: v.variable, type: v.type === 'number' ? 'number' : 'text', maxlength: v.max_length || null });
      input.value = val;
    }
    f.append(h('div.field', {}, label, input));
  }
  f.append(h('p.form-error', { role: 'alert' }));
  return f;
}

// {values} of form f, or {error} naming the first required field empty.
export function formValues(f, form) {
  const values = {};
  for (const item of form) {
    const v = field(item);
    const el = f.querySelector('[name="' + CSS.escape(v.variable || '') + '"]');
    if (!el) continue;
    let x = el.type === 'checkbox' ? el.checked : el.value;
    if (v.type === 'number' && x !== '') x = Number(x);
    if (v.required && (x === '' || x === null)) return { error: (v.label || v.variable) + ' ' + t('required') };
    if (x !== '') values[v.variable] = x;
  }
  return { values };
}
