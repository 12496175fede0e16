/*
 * i18n.js — text a person reads, looked up by key in tables of languages
 * ({en: {...}, zh: {...}}), English the fallback, "{name}" filled from
 * vars. Each page brings its own tables (the admin page's, the editor's,
 * the Web App's) and picks the language once. Imports nothing.
 */

/*
 * i18n(tables, lang): returns t(key, vars) -> the text of key in lang,
 * else in English, else the key itself; t.lang is the language used.
 */
export function i18n(tables, lang) {
	const l = tables[lang] ? lang : 'en';
	const t = (key, vars) => {
		const s = (tables[l] && tables[l][key]) ||
		    (tables.en && tables.en[key]) || key;
		return vars ? s.replace(/\{(\w+)\}/g, (m, k) =>
		    vars[k] === undefined ? m : String(vars[k])) : s;
	};
	t.lang = l;
	return t;
}

/* The reader's language among langs: a choice kept under storeKey, else
 * the browser's, else 'en'. */
export function pickLanguage(langs, storeKey) {
	const own = storeKey ? localStorage.getItem(storeKey) : null;
	if (own && langs.includes(own))
		return own;
	const b = (navigator.language || '').toLowerCase();
	return langs.find((l) => b.startsWith(l)) || 'en';
}
