/*
 * embed.js (also served as embed.min.js) — the chat bubble a website owner
 * pastes, reading Dify's window.difyChatbotConfig as Dify's embed script
 * does: token, baseUrl, inputs, systemVariables, userVariables,
 * containerProps, draggable, dragAxis, dynamicScript, sendOnEnter. Values
 * go into the iframe's URL gzip-compressed and base64-encoded, system
 * variables as sys.<name> and user variables as user.<name>. The iframe
 * and the page speak Dify's three postMessage types.
 */
(function () {
  'use strict';
  var BUTTON = 'dify-chatbot-bubble-button';
  var WINDOW = 'dify-chatbot-bubble-window';
  var config = window.difyChatbotConfig;
  var ICON_OPEN = '<svg width="24" height="24" viewBox="0 0 24 24" fill="none" aria-hidden="true"><path d="M4 5h16v11H8l-4 4z" stroke="white" stroke-width="2" stroke-linejoin="round"/></svg>';
  var ICON_CLOSE = '<svg width="24" height="24" viewBox="0 0 24 24" fill="none" aria-hidden="true"><path d="M6 6l12 12M18 6L6 18" stroke="white" stroke-width="2" stroke-linecap="round"/></svg>';

  async function encode(value) {
    var bytes = new TextEncoder().encode(String(value));
    var stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream('gzip'));
    var out = new Uint8Array(await new Response(stream).arrayBuffer());
    var s = '';
    for (var i = 0; i < out.length; i++) s += String.fromCharCode(out[i]);
    return btoa(s);
  }

  async function params() {
    var all = {};
    var groups = [['', config.inputs], ['sys.', config.systemVariables], ['user.', config.userVariables]];
    for (var g = 0; g < groups.length; g++) {
      var obj = groups[g][1] || {};
      for (var k of Object.keys(obj)) all[groups[g][0] + k] = await encode(obj[k]);
    }
    return new URLSearchParams(all);
  }

  async function embed() {
    if (!config || !config.token) {
      console.error('difyChatbotConfig is empty or token is not provided');
      return;
    }
    var baseUrl = config.baseUrl || ('https://' + (config.isDev ? 'dev.' : '') + 'udify.app');
    var origin = new URL(baseUrl, location.href).origin;
    var segment = config.routeSegment || 'chatbot';
    var p = await params();
    if (config.sendOnEnter === false) p.set('sendOnEnter', 'false');
    var url = baseUrl.replace(/\/$/, '') + '/' + segment + '/' + config.token + '?' + p;
    if (url.length > 2048) console.error('The URL is too long, please reduce the number of inputs to prevent the bot from failing to load');

    function iframe() {
      var f = document.createElement('iframe');
      f.allow = 'fullscreen;microphone;clipboard-write';
      f.src = url;
      f.id = WINDOW;
      f.title = 'Chatbot';
      f.style.cssText = 'border:none;position:fixed;flex-direction:column;justify-content:space-between;' +
        'box-shadow:rgba(150,150,150,0.2) 0px 10px 30px 0px,rgba(150,150,150,0.2) 0px 0px 0px 1px;' +
        'bottom:5rem;right:1rem;width:24rem;max-width:calc(100vw - 2rem);height:40rem;' +
        'max-height:calc(100vh - 6rem);border-radius:0.75rem;display:flex;z-index:2147483640;' +
        'overflow:hidden;left:unset;top:unset;background-color:#F3F4F6;';
      document.body.appendChild(f);
      return f;
    }

    window.addEventListener('message', function (e) {
      if (e.origin !== origin || !e.data) return;
      var f = document.getElementById(WINDOW);
      if (e.data.type === 'dify-chatbot-iframe-ready' && f) {
        f.contentWindow.postMessage({ type: 'dify-chatbot-config',
          payload: { isToggledByButton: true, isDraggable: !!config.draggable } }, origin);
      }
      if (e.data.type === 'dify-chatbot-expand-change' && f) {
        var big = f.style.width !== '48rem';
        f.style.width = big ? '48rem' : '24rem';
        f.style.height = big ? '88%' : '40rem';
      }
    });

    if (document.getElementById(BUTTON)) return;
    var button = document.createElement('div');
    var props = config.containerProps || {};
    for (var k of Object.keys(props)) {
      if (k === 'style' && typeof props.style === 'object') Object.assign(button.style, props.style);
      else if (k === 'style') button.style.cssText += props.style;
      else if (k === 'className') button.className = props.className;
      else if (typeof props[k] === 'function' && k.startsWith('on')) button.addEventListener(k.slice(2).toLowerCase(), props[k]);
      else button.setAttribute(k, props[k]);
    }
    button.id = BUTTON;
    button.setAttribute('role', 'button');
    button.setAttribute('tabindex', '0');
    button.setAttribute('aria-label', 'Chat');
    var style = document.createElement('style');
    style.textContent = '#' + BUTTON + '{position:fixed;bottom:var(--' + BUTTON + '-bottom,1rem);' +
      'right:var(--' + BUTTON + '-right,1rem);left:var(--' + BUTTON + '-left,unset);' +
      'top:var(--' + BUTTON + '-top,unset);width:var(--' + BUTTON + '-width,48px);' +
      'height:var(--' + BUTTON + '-height,48px);border-radius:var(--' + BUTTON + '-border-radius,25px);' +
      'background-color:var(--' + BUTTON + '-bg-color,#155EEF);box-shadow:var(--' + BUTTON +
      '-box-shadow,rgba(0,0,0,0.2) 0px 4px 8px 0px);cursor:pointer;z-index:2147483647;}' +
      '#' + BUTTON + ' > div{display:flex;align-items:center;justify-content:center;width:100%;height:100%;z-index:2147483647;}';
    document.head.appendChild(style);
    var open = document.createElement('div');
    open.innerHTML = ICON_OPEN;
    var close = document.createElement('div');
    close.innerHTML = ICON_CLOSE;
    close.style.display = 'none';
    button.appendChild(open);
    button.appendChild(close);
    var moved = false;
    function toggle() {
      if (moved) { moved = false; return; }
      var f = document.getElementById(WINDOW);
      if (!f) { iframe(); open.style.display = 'none'; close.style.display = 'flex'; return; }
      var hidden = f.style.display === 'none';
      f.style.display = hidden ? 'flex' : 'none';
      open.style.display = hidden ? 'none' : 'flex';
      close.style.display = hidden ? 'flex' : 'none';
    }
    button.addEventListener('click', toggle);
    button.addEventListener('keydown', function (e) {
      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); toggle(); }
    });
    if (config.draggable) {
      var axis = config.dragAxis || 'both', sx = 0, sy = 0, dragging = false;
      button.addEventListener('pointerdown', function (e) { dragging = true; sx = e.clientX; sy = e.clientY; });
      document.addEventListener('pointermove', function (e) {
        if (!dragging) return;
        var dx = e.clientX - sx, dy = e.clientY - sy;
        if (Math.abs(dx) + Math.abs(dy) > 3) moved = true;
        var r = button.getBoundingClientRect();
        if (axis !== 'y') button.style.setProperty('--' + BUTTON + '-right', Math.max(0, innerWidth - r.right - dx) + 'px');
        if (axis !== 'x') button.style.setProperty('--' + BUTTON + '-bottom', Math.max(0, innerHeight - r.bottom - dy) + 'px');
        sx = e.clientX; sy = e.clientY;
      });
      document.addEventListener('pointerup', function () { dragging = false; });
    }
    document.body.appendChild(button);
  }

  if (config && config.dynamicScript) embed();
  else if (document.readyState === 'complete') embed();
  else window.addEventListener('load', embed);
})();
