// The lcp web page: lists the inventory, runs calls, answers the
// confirmations and questions of running tools, and shows the event log.
// Plain script, no build step, no outside resources. Everything shown is
// put in the DOM as text (textContent), never as HTML.
'use strict';

(() => {
  // The page is signed in by an HttpOnly cookie (set when the one-time
  // sign-in address was opened): same-origin requests carry it.
  const $ = (id) => document.getElementById(id);
  const MAX_LOG = 1000;
  const MAX_CALLS_SHOWN = 50;

  // state mirrors the server: pending requests by id, calls by id, grants.
  const state = {
    pending: new Map(),
    calls: new Map(),
    grants: [],
    seq: 0,
    stale: false, // signed out (the server restarted)
  };

  // el builds an element: attrs are attributes (class, data-*, ...) except
  // a few properties; children are nodes or strings (as text).
  // appendTo appends to any element, a form whose member append is
  // shadowed by a field of that name too.
  function appendTo(n, ...children) { Element.prototype.append.apply(n, children); }

  function el(tag, attrs, ...children) {
    const n = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'text') n.textContent = v;
      else if (k === 'value' || k === 'checked' || k === 'disabled' || k === 'selected') n[k] = v;
      else if (k.startsWith('on')) n.addEventListener(k.slice(2), v);
      else n.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children) {
      if (c === undefined || c === null || c === false) continue;
      n.append(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return n;
  }

  class APIError extends Error {
    constructor(status, msg) { super(msg); this.status = status; }
  }

  async function api(method, path, body) {
    const opts = { method, headers: {}, cache: 'no-store', credentials: 'same-origin' };
    if (body !== undefined) {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = typeof body === 'string' ? body : JSON.stringify(body);
    }
    const r = await fetch(path, opts);
    let data = null;
    try { data = await r.json(); } catch (_) { /* not JSON */ }
    if (!r.ok) {
      if (r.status === 401) markStale();
      throw new APIError(r.status, (data && data.error) || (r.status + ' ' + r.statusText));
    }
    return data;
  }

  const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
  const clock = (t) => {
    const d = t ? new Date(t) : new Date();
    return d.toLocaleTimeString([], { hour12: false });
  };

  function setConn(s, msg) {
    const c = $('conn');
    c.dataset.state = s;
    c.textContent = msg || { live: 'live', connecting: 'connecting…', offline: 'offline, retrying…' }[s] || s;
  }

  function markStale() {
    state.stale = true;
    setConn('stale', 'Signed out (the server restarted?): open the new address lcp serve printed.');
  }

  // ---------------------------------------------------------------- live

  // connect keeps the page in step with the server: read the state, follow
  // the event stream from there, and start over after any break.
  async function connect() {
    let delay = 500;
    let broken = false;
    while (!state.stale) {
      try {
        setConn('connecting');
        const st = await api('GET', 'api/state');
        applyState(st);
        if (broken) loadTools(); // the server may have restarted with other tools
        broken = false;
        await follow(st.seq);
        delay = 500;
      } catch (e) {
        if (state.stale) return;
        broken = true;
        setConn('offline', 'offline (' + e.message + '), retrying…');
        await sleep(delay);
        delay = Math.min(delay * 2, 5000);
      }
    }
  }

  // follow reads the server-sent events after seq until the stream ends or
  // stalls; a resync event ends it too, so that connect re-reads the state.
  async function follow(seq) {
    const ctrl = new AbortController();
    let watchdog;
    const arm = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => ctrl.abort(), 45000); // pings come every 15 s
    };
    arm();
    try {
      const r = await fetch('api/events?since=' + seq, {
        cache: 'no-store', credentials: 'same-origin', signal: ctrl.signal,
      });
      if (!r.ok) {
        let msg = r.status + ' ' + r.statusText;
        try { msg = (await r.json()).error || msg; } catch (_) { /* keep */ }
        if (r.status === 401) markStale();
        throw new Error(msg);
      }
      setConn('live');
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        arm();
        buf += value;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const ev = parseSSE(block);
          if (!ev) continue;
          if (ev.type === 'resync') { ctrl.abort(); return; }
          applyEvent(ev);
        }
      }
    } catch (e) {
      if (ctrl.signal.aborted) return; // stalled or resync: start over
      throw e;
    } finally {
      clearTimeout(watchdog);
    }
  }

  function parseSSE(block) {
    let data = '';
    for (const line of block.split('\n')) {
      if (line.startsWith('data:')) data += line.slice(5).trimStart();
    }
    if (!data) return null;
    try { return JSON.parse(data); } catch (_) { return null; }
  }

  function applyState(st) {
    state.seq = st.seq;
    const ids = new Set();
    for (const p of st.pending) {
      ids.add(p.request.id);
      state.pending.set(p.request.id, p);
    }
    for (const id of [...state.pending.keys()]) if (!ids.has(id)) state.pending.delete(id);
    renderPending();
    state.calls.clear();
    for (const c of st.calls) state.calls.set(c.id, c);
    renderCalls(true);
    state.grants = st.grants;
    renderGrants();
    const log = $('log');
    log.textContent = '';
    for (const ev of st.events) logEvent(ev);
  }

  function applyEvent(ev) {
    if (ev.seq <= state.seq) return; // already in the state
    state.seq = ev.seq;
    logEvent(ev);
    switch (ev.type) {
      case 'request': return applyRequestEvent(ev.request);
      case 'call': {
        state.calls.set(ev.call.id, ev.call);
        return renderCall(ev.call);
      }
      case 'output': return appendOutput(ev.output);
      case 'progress': return applyProgress(ev.progress);
      case 'tools': return loadTools(); // a tool file changed (lcp serve --watch)
    }
  }

  function applyRequestEvent(h) {
    switch (h.type) {
      case 'opened':
        state.pending.set(h.request.id, { request: h.request, opened: h.time, deadline: h.deadline });
        break;
      case 'answered': case 'withdrawn': case 'timed_out': case 'failed':
        if (h.request) state.pending.delete(h.request.id);
        break;
      case 'granted':
        state.grants.push(h.grant);
        renderGrants();
        return;
      case 'revoked':
        state.grants = state.grants.filter((g) => !(g.library === h.grant.library && g.label === h.grant.label));
        renderGrants();
        return;
    }
    renderPending();
  }

  // ------------------------------------------------------------ inventory

  let toolsSeen = '';

  // loadTools draws the inventory; it keeps the forms (and what was typed
  // in them) when the inventory did not change.
  async function loadTools() {
    for (;;) {
      try {
        const v = await api('GET', 'api/tools');
        const text = JSON.stringify(v);
        if (text !== toolsSeen) {
          toolsSeen = text;
          renderTools(v);
        }
        return;
      } catch (e) {
        $('libraries').textContent = '';
        $('libraries').append(el('p', { class: 'error', text: 'Could not list the tools: ' + e.message }));
        if (state.stale) return;
        await sleep(2000);
      }
    }
  }

  function renderTools(v) {
    const box = $('libraries');
    box.textContent = '';
    if (!v.libraries.length) box.append(el('p', { class: 'muted', text: 'No tools.' }));
    for (const lib of v.libraries) {
      const sec = el('section', { class: 'library', 'data-library': lib.id });
      sec.append(el('header', {},
        libraryIcon(lib.icon),
        el('h3', { text: lib.name }),
        lib.id && lib.id !== lib.name ? el('span', { class: 'muted mono', text: lib.id }) : null));
      if (lib.description) sec.append(libraryDescription(lib.description));
      for (const t of lib.tools) sec.append(toolCard(t));
      box.append(sec);
    }
    const d = $('diagnostics');
    d.textContent = '';
    if (v.diagnostics && v.diagnostics.length) {
      const det = el('details', { class: 'diagnostics' }, el('summary', { text: v.diagnostics.length + ' diagnostic(s)' }));
      const ul = el('ul');
      for (const x of v.diagnostics) {
        const where = x.file ? x.file + (x.line ? ':' + x.line : '') + ': ' : '';
        ul.append(el('li', { class: 'sev-' + x.severity, text: x.severity + ': ' + where + x.message }));
      }
      det.append(ul);
      d.append(det);
    }
    applyFilter();
  }

  // A library's description: short ones as they are; a long one (several
  // lines, or more than LONG_DESC characters) collapsed to its beginning,
  // opened on a click.
  const LONG_DESC = 160;
  function libraryDescription(text) {
    const first = text.split('\n')[0];
    if (text.length <= LONG_DESC && first === text) return el('p', { class: 'lib-desc', text });
    const head = first.length > LONG_DESC ? first.slice(0, LONG_DESC).replace(/\s+\S*$/, '') : first;
    return el('details', { class: 'lib-desc long' },
      el('summary', {}, el('span', { class: 'more', text: head + ' … more' }), el('span', { class: 'less', text: 'less' })),
      el('p', { class: 'lib-desc-full', text }));
  }

  // The tool's hints, as badges: read-only, destructive (when not
  // read-only), idempotent, open world; only the hints set to true.
  function hintBadges(a) {
    const out = [];
    if (!a) return out;
    const badge = (hint, text, title) => out.push(el('span', { class: 'hint hint-' + hint, 'data-hint': hint, title, text }));
    if (a.readOnlyHint === true) badge('read-only', 'read-only', 'The tool says it does not change anything.');
    else if (a.destructiveHint === true) badge('destructive', 'destructive', 'The tool says it may delete or overwrite things.');
    if (a.readOnlyHint !== true && a.idempotentHint === true) badge('idempotent', 'idempotent', 'Calling it again with the same arguments changes nothing more.');
    if (a.openWorldHint === true) badge('open-world', 'open world', 'The tool reaches beyond this machine (the web, other systems).');
    return out;
  }

  const ASK_WORDS = { confirm: 'approval', text: 'text', secret: 'a secret', select: 'a choice', form: 'a form' };

  function libraryIcon(icon) {
    if (!icon) return el('span', { class: 'icon', 'aria-hidden': 'true', text: '🧰' });
    if (/^data:image\/(png|gif|jpeg|webp|svg\+xml)[;,]/i.test(icon)) {
      return el('img', { class: 'icon', src: icon, alt: '' });
    }
    // An emoji or a short mark; anything long (a path, a URL) is not fetched.
    return el('span', { class: 'icon', 'aria-hidden': 'true', text: [...icon].length <= 4 ? icon : '🧰' });
  }

  function toolCard(t) {
    const det = el('details', { class: 'tool', 'data-tool': t.name });
    const first = (t.description || '').split('\n')[0];
    det.append(el('summary', {}, el('span', { class: 'tool-name mono', text: t.name }),
      t.title ? el('span', { class: 'tool-title', text: ' ' + t.title }) : null,
      ...hintBadges(t.annotations).flatMap((b) => [' ', b]),
      ' ', el('span', { class: 'muted', text: first })));
    const body = el('div', { class: 'tool-body' });
    if (t.description) body.append(el('p', { class: 'desc', text: t.description }));
    // What the page may have to answer for this tool: what its source
    // shows it asks, else what it declares (the server decides).
    const kinds = Array.isArray(t.may_ask) ? t.may_ask : [];
    const meta = el('p', { class: 'meta muted' });
    if (kinds.length) meta.append(el('span', { class: 'may-ask', 'data-kinds': kinds.join(' '), text: 'may ask for ' + kinds.map((k) => ASK_WORDS[k] || k).join(', ') }), ' ');
    if (t.source) meta.append(el('span', { class: 'mono', title: t.source, text: t.source.split('/').pop() }));
    if (t._parsed_via_regex_fallback) meta.append(el('span', { class: 'warn', text: ' (read by the fallback parser: the file is not valid Python)' }));
    if (meta.childNodes.length) body.append(meta);

    const form = el('form', { class: 'tool-form', novalidate: true, 'data-tool': t.name });
    const fields = buildFields(t.input_schema || {}, 'f-' + t.name);
    // A parameter named like a form member (append, reset, submit,
    // action, method, length, elements, name, …) shadows that member on
    // the form element, so the form's own methods are called through
    // their prototypes, never by name on the form.
    appendTo(form, fields.node);
    const err = el('p', { class: 'error form-error', role: 'alert' });
    const run = el('button', { type: 'submit', class: 'primary', text: 'Run' });
    const reset = el('button', { type: 'button', text: 'Reset', onclick: () => { HTMLFormElement.prototype.reset.call(form); fields.reset(); err.textContent = ''; } });
    appendTo(form, el('div', { class: 'buttons' }, run, reset), err);
    EventTarget.prototype.addEventListener.call(form, 'submit', async (e) => {
      e.preventDefault();
      err.textContent = '';
      const got = fields.read();
      if (got.error) { err.textContent = got.error; return; }
      run.disabled = true;
      try {
        const c = await api('POST', 'api/calls', '{"tool":' + JSON.stringify(t.name) + ',"args":' + got.json + '}');
        if (!state.calls.has(c.id)) { state.calls.set(c.id, c); renderCall(c); }
      } catch (x) {
        err.textContent = x.message;
      } finally {
        run.disabled = false;
      }
    });
    body.append(form);
    det.append(body);
    return det;
  }

  $('filter').addEventListener('input', applyFilter);
  function applyFilter() {
    const q = $('filter').value.trim().toLowerCase();
    for (const lib of document.querySelectorAll('#libraries .library')) {
      let shown = 0;
      const libText = lib.querySelector('header').textContent.toLowerCase();
      for (const t of lib.querySelectorAll('.tool')) {
        const hit = !q || libText.includes(q) || t.querySelector('summary').textContent.toLowerCase().includes(q);
        t.hidden = !hit;
        if (hit) shown++;
      }
      lib.hidden = shown === 0;
    }
  }

  // ---------------------------------------------------------------- forms

  function schemaType(ps) {
    let t = ps && ps.type;
    if (Array.isArray(t)) t = t.find((x) => x !== 'null');
    if (['string', 'integer', 'number', 'boolean', 'array', 'object'].includes(t)) return t;
    return 'json';
  }

  // choices returns the options of a property as {value, title}: its
  // enum (titled by the legacy enumNames), or the consts of its oneOf or
  // anyOf (titled enums); null when it has none.
  function choices(ps) {
    if (!ps) return null;
    if (Array.isArray(ps.enum) && ps.enum.length) {
      const names = Array.isArray(ps.enumNames) && ps.enumNames.length === ps.enum.length ? ps.enumNames : null;
      return ps.enum.map((v, i) => ({ value: v, title: names ? String(names[i]) : String(v) }));
    }
    for (const alts of [ps.oneOf, ps.anyOf]) {
      if (!Array.isArray(alts)) continue;
      const out = alts.filter((a) => a && 'const' in a).map((a) => ({ value: a.const, title: a.title != null ? String(a.title) : String(a.const) }));
      if (out.length) return out;
    }
    return null;
  }

  const INT_RE = /^[+-]?\d+$/;
  const NUM_RE = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

  // buildFields returns the inputs of an object schema and read(), which
  // gives the arguments as JSON text (integers are copied digit for digit,
  // so big ones stay exact) or an error.
  function buildFields(schema, prefix) {
    const node = el('div', { class: 'fields' });
    const props = (schema && typeof schema.properties === 'object' && schema.properties) || {};
    const required = new Set(Array.isArray(schema && schema.required) ? schema.required : []);
    const readers = [];
    const resets = [];
    let n = 0;
    for (const [name, ps0] of Object.entries(props)) {
      const ps = ps0 || {};
      const type = schemaType(ps);
      const req = required.has(name);
      const has = Object.prototype.hasOwnProperty.call(ps, 'default');
      const def = ps.default;
      const id = prefix + '-' + (n++);
      const label = el('label', { for: id },
        el('span', { class: 'mono', text: name }),
        req ? el('span', { class: 'req', title: 'required', text: ' *' }) : null,
        el('span', { class: 'type muted', text: ' ' + type }));
      const field = el('div', { class: 'field', 'data-field': name, 'data-type': type });
      field.append(label);
      let input;
      let read;
      let reset;
      const opts = choices(ps);
      const many = type === 'array' ? choices(ps.items) : null;
      if (opts && opts.every((o) => typeof o.value === 'string')) {
        input = el('select', { id, name });
        if (!req) input.append(el('option', { value: '', text: '(not set)' }));
        for (const o of opts) input.append(el('option', { value: o.value, text: o.title }));
        const values = opts.map((o) => o.value);
        reset = () => { input.value = has && values.includes(def) ? def : (req ? values[0] : ''); };
        read = () => (input.value === '' ? undefined : JSON.stringify(input.value));
      } else if (many) {
        // Several choices (a multi-select): one checkbox per option.
        input = el('fieldset', { id, class: 'choices', 'aria-label': name });
        const boxes = many.map((o, i) => {
          const box = el('input', { type: 'checkbox', id: id + '-' + i, 'data-value': JSON.stringify(o.value) });
          input.append(el('label', { class: 'choice', for: id + '-' + i }, box, ' ' + o.title));
          return { box, o };
        });
        const defs = Array.isArray(def) ? def.map((d) => JSON.stringify(d)) : [];
        reset = () => { for (const b of boxes) b.box.checked = defs.includes(JSON.stringify(b.o.value)); };
        read = () => {
          const picked = boxes.filter((b) => b.box.checked).map((b) => JSON.stringify(b.o.value));
          if (!picked.length && !req && !ps.minItems) return undefined;
          if (picked.length < Math.max(ps.minItems || 0, req ? 1 : 0)) throw new Error(name + ': choose at least ' + Math.max(ps.minItems || 0, 1));
          if (ps.maxItems && picked.length > ps.maxItems) throw new Error(name + ': choose at most ' + ps.maxItems);
          return '[' + picked.join(',') + ']';
        };
      } else if (type === 'boolean' && (req || has)) {
        input = el('input', { id, name, type: 'checkbox' });
        reset = () => { input.checked = def === true || def === 'true' || def === 'True'; };
        read = () => (input.checked ? 'true' : 'false');
      } else if (type === 'boolean') {
        input = el('select', { id, name },
          el('option', { value: '', text: '(not set)' }), el('option', { value: 'true', text: 'true' }), el('option', { value: 'false', text: 'false' }));
        reset = () => { input.value = ''; };
        read = () => (input.value === '' ? undefined : input.value);
      } else if (type === 'array' || type === 'object' || type === 'json') {
        input = el('textarea', { id, name, rows: 3, spellcheck: 'false', class: 'mono',
          placeholder: type === 'array' ? '[ JSON array ]' : type === 'object' ? '{ JSON object }' : 'JSON value or text' });
        reset = () => { input.value = has ? (typeof def === 'string' && type !== 'json' ? def : JSON.stringify(def, null, 2)) : ''; };
        read = () => {
          const raw = input.value.trim();
          if (raw === '') {
            if (req) throw new Error(name + ' is required');
            return undefined;
          }
          let v;
          try { v = JSON.parse(raw); } catch (_) {
            if (type === 'json') return JSON.stringify(input.value);
            throw new Error(name + ' must be a JSON ' + type);
          }
          if (type === 'array' && !Array.isArray(v)) throw new Error(name + ' must be a JSON array');
          if (type === 'object' && (v === null || typeof v !== 'object' || Array.isArray(v))) throw new Error(name + ' must be a JSON object');
          return raw;
        };
      } else if (type === 'integer' || type === 'number') {
        input = el('input', { id, name, type: 'text', inputmode: type === 'integer' ? 'numeric' : 'decimal', autocomplete: 'off' });
        reset = () => { input.value = has && def !== null ? String(def) : ''; };
        read = () => {
          const raw = input.value.trim();
          if (raw === '') {
            if (req) throw new Error(name + ' is required');
            return undefined;
          }
          if (INT_RE.test(raw)) return raw.replace(/^\+/, '').replace(/^(-?)0+(?=\d)/, '$1');
          if (type === 'integer') throw new Error(name + ' must be an integer');
          if (!NUM_RE.test(raw) || !Number.isFinite(Number(raw))) throw new Error(name + ' must be a number');
          return String(Number(raw));
        };
      } else {
        const multi = ps.format === 'textarea' || (typeof def === 'string' && def.includes('\n'));
        input = multi ? el('textarea', { id, name, rows: 3 }) : el('input', { id, name, type: 'text', autocomplete: 'off' });
        reset = () => { input.value = has && def !== null ? (typeof def === 'string' ? def : JSON.stringify(def)) : ''; };
        read = () => {
          if (input.value === '') {
            if (req) throw new Error(name + ' is required');
            return undefined;
          }
          return JSON.stringify(input.value);
        };
      }
      if (req && input.type !== 'checkbox') input.setAttribute('aria-required', 'true');
      reset();
      resets.push(reset);
      field.append(input);
      if (ps.description) field.append(el('small', { class: 'help', text: ps.description }));
      node.append(field);
      readers.push({ name, read, input });
    }
    if (!n) node.append(el('p', { class: 'muted', text: 'No parameters.' }));
    return {
      node,
      reset: () => resets.forEach((r) => r()),
      read: () => {
        const parts = [];
        for (const r of readers) {
          r.input.removeAttribute('aria-invalid');
          let v;
          try { v = r.read(); } catch (e) {
            r.input.setAttribute('aria-invalid', 'true');
            r.input.focus();
            return { error: e.message };
          }
          if (v !== undefined) parts.push(JSON.stringify(r.name) + ':' + v);
        }
        return { json: '{' + parts.join(',') + '}' };
      },
    };
  }

  // ------------------------------------------------------------- requests

  const KIND_TITLES = { confirm: 'Approve this action?', text: 'A question', secret: 'A secret is needed', select: 'Choose', form: 'A form' };

  function renderPending() {
    const box = $('pending');
    const cards = new Map([...box.querySelectorAll('article.request')].map((c) => [c.dataset.id, c]));
    for (const [id, c] of cards) if (!state.pending.has(id)) c.remove();
    const empty = box.querySelector('.empty');
    if (empty) empty.hidden = state.pending.size > 0;
    // Oldest first; an existing card stays as it is, with what was typed.
    for (const [id, p] of state.pending) {
      if (!cards.has(id)) box.append(requestCard(p));
    }
    $('pending-count').textContent = String(state.pending.size);
    $('pending-count').dataset.count = String(state.pending.size);
    document.title = (state.pending.size ? '(' + state.pending.size + ') ' : '') + document.title.replace(/^\(\d+\) /, '');
  }

  function requestCard(p) {
    const r = p.request;
    const card = el('article', { class: 'request', 'data-id': r.id, 'data-kind': r.kind, 'data-tool': r.tool });
    card.append(el('header', {},
      el('h3', { text: r.title || KIND_TITLES[r.kind] || r.kind }),
      el('span', { class: 'muted' }, el('span', { class: 'mono', text: r.tool }), r.library ? ' · ' + r.library : ''),
      p.deadline ? el('span', { class: 'deadline muted', 'data-deadline': p.deadline }) : null));
    if (r.prompt) card.append(el('p', { class: 'prompt', text: r.prompt }));
    const err = el('p', { class: 'error', role: 'alert' });
    const buttons = el('div', { class: 'buttons' });
    const send = async (body, clear) => {
      err.textContent = '';
      for (const b of buttons.querySelectorAll('button')) b.disabled = true;
      try {
        await api('POST', 'api/requests/' + encodeURIComponent(r.id) + '/answer', body);
        if (clear) clear();
        state.pending.delete(r.id);
        renderPending();
      } catch (e) {
        if (clear) clear();
        err.textContent = e.message;
        if (e.status === 404 || e.status === 409) { state.pending.delete(r.id); setTimeout(renderPending, 1500); }
        for (const b of buttons.querySelectorAll('button')) b.disabled = false;
      }
    };
    const decline = el('button', { type: 'button', 'data-action': 'decline', text: 'Decline',
      onclick: () => send({ action: 'decline', reason: 'The user declined to answer.' }) });

    switch (r.kind) {
      case 'confirm': {
        if (r.label) card.append(el('p', { class: 'label' }, 'Action: ', el('span', { class: 'mono', text: r.label })));
        if (r.source) card.append(el('pre', { class: 'source', text: r.source }));
        if (r.argv && r.argv.length && r.argv.join(' ') !== r.source) card.append(el('p', { class: 'argv mono', text: r.argv.map(shellQuote).join(' ') }));
        const fb = el('textarea', { class: 'feedback', rows: 2, placeholder: 'Feedback for the LLM (sent with Reject)', 'aria-label': 'feedback' });
        card.append(fb);
        buttons.append(
          el('button', { type: 'button', class: 'primary', 'data-action': 'allow', text: 'Allow once',
            onclick: () => send({ action: 'submit', value: 'allow' }) }),
          el('button', { type: 'button', 'data-action': 'always', title: 'Allow this action for the rest of the session', text: 'Always',
            onclick: () => send({ action: 'submit', value: 'always' }) }),
          el('button', { type: 'button', class: 'danger', 'data-action': 'reject', text: 'Reject',
            onclick: () => send({ action: 'decline', reason: fb.value.trim() || 'The operator rejected the action.' }) }));
        break;
      }
      case 'text': case 'secret': {
        let input;
        if (r.kind === 'secret') {
          input = el('input', { type: 'password', class: 'answer', autocomplete: 'new-password', spellcheck: 'false', 'aria-label': r.title || 'secret' });
        } else if (r.multiline) {
          input = el('textarea', { class: 'answer', rows: 4, 'aria-label': r.title || 'answer' });
        } else {
          input = el('input', { type: 'text', class: 'answer', autocomplete: 'off', 'aria-label': r.title || 'answer' });
        }
        if (r.kind === 'text' && r.default != null) input.value = r.default;
        const submit = () => {
          const v = input.value;
          // A secret leaves the page's DOM as soon as it is read.
          if (r.kind === 'secret') input.value = '';
          send({ action: 'submit', value: v });
        };
        if (input.tagName === 'INPUT') input.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); submit(); } });
        card.append(input);
        buttons.append(el('button', { type: 'button', class: 'primary', 'data-action': 'submit', text: 'Submit', onclick: submit }), decline);
        break;
      }
      case 'select': {
        const sel = el('select', { class: 'answer', 'aria-label': r.title || 'choice' });
        const def = r.default != null && (r.options || []).includes(r.default) ? r.default : null;
        if (def === null) sel.append(el('option', { value: '', text: 'Choose…', disabled: true, selected: true }));
        const titles = Array.isArray(r.option_titles) && r.option_titles.length === (r.options || []).length ? r.option_titles : null;
        (r.options || []).forEach((o, i) => sel.append(el('option', { value: o, text: titles ? titles[i] : o, selected: o === def })));
        card.append(sel);
        buttons.append(el('button', { type: 'button', class: 'primary', 'data-action': 'submit', text: 'Submit', onclick: () => {
          if (sel.selectedIndex < 0 || sel.options[sel.selectedIndex].disabled) { err.textContent = 'Choose an option.'; return; }
          send({ action: 'submit', value: sel.value });
        } }), decline);
        break;
      }
      case 'form': {
        let schema = r.schema || {};
        const fields = buildFields(schema, 'r-' + r.id);
        card.append(fields.node);
        buttons.append(el('button', { type: 'button', class: 'primary', 'data-action': 'submit', text: 'Submit', onclick: () => {
          const got = fields.read();
          if (got.error) { err.textContent = got.error; return; }
          send('{"action":"submit","value":' + got.json + '}');
        } }), decline);
        break;
      }
      default:
        card.append(el('p', { class: 'warn', text: 'This page cannot show a request of kind ' + r.kind + '.' }));
        buttons.append(decline);
    }
    buttons.append(el('button', { type: 'button', class: 'link', 'data-action': 'cancel-call', title: 'Cancel the whole call', text: 'Cancel call',
      onclick: () => send({ action: 'cancel', reason: 'The user cancelled the call.' }) }));
    card.append(buttons, err);
    return card;
  }

  function shellQuote(s) {
    return /^[\w@%+=:,./-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'";
  }

  function renderGrants() {
    const box = $('grants');
    box.textContent = '';
    if (!state.grants.length) return;
    const ul = el('ul', { class: 'grants' });
    for (const g of state.grants) {
      ul.append(el('li', {}, 'Always allowed: ', el('span', { class: 'mono', text: g.library + ' / ' + g.label }), ' ',
        el('button', { type: 'button', class: 'link', 'data-action': 'revoke', text: 'revoke',
          onclick: () => api('POST', 'api/grants/revoke', { library: g.library, label: g.label }).catch((e) => alert(e.message)) })));
    }
    box.append(el('details', { open: true }, el('summary', { text: 'Always approvals (' + state.grants.length + ')' }), ul));
  }

  setInterval(() => {
    const now = Date.now();
    for (const n of document.querySelectorAll('[data-deadline]')) {
      const left = Math.max(0, Math.round((Date.parse(n.dataset.deadline) - now) / 1000));
      n.textContent = 'times out in ' + Math.floor(left / 60) + ':' + String(left % 60).padStart(2, '0');
    }
    for (const n of document.querySelectorAll('[data-started]')) n.textContent = elapsed(n.dataset.started, now);
  }, 1000);

  // ----------------------------------------------------------------- calls

  function renderCalls(all) {
    const box = $('calls');
    if (all) {
      for (const c of box.querySelectorAll('article.call')) c.remove();
      const list = [...state.calls.values()].slice(-MAX_CALLS_SHOWN);
      for (const c of list) renderCall(c);
    }
    const empty = box.querySelector('.empty');
    if (empty) empty.hidden = !!box.querySelector('article.call');
  }

  // duration says how long something took: 420 ms, 3.4 s, 2 min 05 s.
  function duration(ms) {
    if (!(ms >= 0)) return '';
    if (ms < 1000) return Math.round(ms) + ' ms';
    if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
    const s = Math.round(ms / 1000);
    return Math.floor(s / 60) + ' min ' + String(s % 60).padStart(2, '0') + ' s';
  }

  // elapsed is the time a running call has taken, in whole seconds.
  function elapsed(started, now) {
    const s = Math.max(0, Math.floor((now - Date.parse(started)) / 1000));
    return s < 60 ? s + ' s' : Math.floor(s / 60) + ' min ' + String(s % 60).padStart(2, '0') + ' s';
  }

  // callStatus is the status of a finished call as people read it: ok,
  // rejected (a confirmation was declined and the call failed), cancelled,
  // engine error, failed.
  function callStatus(c, res) {
    if (res.success) return { cls: 'ok', text: res.status_code + ' ok' };
    if (c.rejected) return { cls: 'rejected', text: 'rejected' };
    if (res.status_code === 499) return { cls: 'failed', text: '499 cancelled' };
    return { cls: 'failed', text: res.status_code + (c.engine_error ? ' engine error' : ' failed') };
  }

  // progressView is a running call's progress: a bar (moving, when the
  // total is unknown) with the percentage or count and the message.
  function progressView(p) {
    const known = p.total > 0;
    const bar = el('progress', known ? { max: p.total, value: Math.min(p.progress, p.total) } : {});
    const parts = [];
    if (known) parts.push(Math.round(100 * Math.min(1, p.progress / p.total)) + '%');
    else if (p.progress) parts.push(String(p.progress));
    if (p.message) parts.push(p.message);
    return el('div', { class: 'call-progress', 'data-progress': p.progress, 'data-total': p.total || 0 },
      bar, ' ', el('span', { class: 'progress-text', text: parts.join(' ') }));
  }

  function renderCall(c) {
    const box = $('calls');
    let card = box.querySelector('article.call[data-call="' + CSS.escape(c.id) + '"]');
    const fresh = el('article', { class: 'call', 'data-call': c.id, 'data-state': c.state, 'data-tool': c.tool });
    const head = el('header', {}, el('h3', { class: 'mono', text: c.tool }), el('span', { class: 'muted', text: clock(c.started) }));
    const res = c.result && typeof c.result === 'object' ? c.result : null;
    if (c.state === 'running') {
      head.append(el('span', { class: 'status running', text: 'running…' }),
        el('span', { class: 'elapsed muted', 'data-started': c.started, text: elapsed(c.started, Date.now()) }),
        el('button', { type: 'button', class: 'link', 'data-action': 'cancel', text: 'cancel',
          onclick: () => api('POST', 'api/calls/' + encodeURIComponent(c.id) + '/cancel', {}).catch((e) => alert(e.message)) }));
    } else if (res) {
      const st = callStatus(c, res);
      head.append(el('span', { class: 'status ' + st.cls, 'data-status': res.status_code, text: st.text }));
      const took = Date.parse(c.finished) - Date.parse(c.started);
      if (took >= 0) head.append(el('span', { class: 'duration muted', 'data-ms': took, title: 'how long the call took', text: duration(took) }));
    }
    fresh.append(head);
    if (c.args && JSON.stringify(c.args) !== '{}') {
      fresh.append(el('details', { class: 'args' }, el('summary', { text: 'arguments' }), el('pre', { text: JSON.stringify(c.args, null, 2) })));
    }
    if (c.state === 'running' && c.progress) fresh.append(progressView(c.progress));
    if (c.rejected) {
      const r = c.rejected;
      fresh.append(el('p', { class: 'rejection' }, 'Approval rejected' + (r.label ? ' for ' : ''),
        r.label ? el('span', { class: 'mono', text: r.label }) : null, r.reason ? ': ' + r.reason : ''));
    }
    // What the tool printed, kept with the call (the server sends it
    // whole with each call event; output events add to it).
    const printed = el('pre', { class: 'live-output', hidden: true });
    for (const o of c.printed || []) appendPrinted(printed, o);
    if (c.printed_dropped) printed.append(el('span', { class: 'muted', text: '\n(' + c.printed_dropped + ' more bytes not kept)' }));
    fresh.append(printed);
    if (res) fresh.append(resultView(res));
    if (card) card.replaceWith(fresh);
    else {
      box.prepend(fresh);
      const cards = box.querySelectorAll('article.call');
      for (let i = MAX_CALLS_SHOWN; i < cards.length; i++) cards[i].remove();
    }
    renderCalls(false);
  }

  const META = new Set(['output', 'success', 'status_code', 'error', 'traceback', 'prompt_injection', '_lcp_content']);

  // base64Size is the number of bytes base64 text stands for.
  function base64Size(b64) {
    const s = String(b64 || '');
    return Math.floor(s.length * 3 / 4) - (s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0);
  }

  const IMAGE_TYPES = /^image\/(png|gif|jpeg|webp|bmp)$/i;
  const AUDIO_TYPES = /^audio\/(wav|x-wav|wave|mpeg|mp3|ogg|webm|flac|aac|mp4)$/i;

  // contentView shows a result's content blocks beside its text: images
  // as images, the rest as placeholders with their type and size.
  function contentView(blocks) {
    const box = el('div', { class: 'content' });
    for (const b of blocks) {
      if (!b || b.type === 'text') continue; // the output shows the text
      if (b.type === 'image' && IMAGE_TYPES.test(b.mimeType || '')) {
        box.append(el('img', { class: 'content-image', src: 'data:' + b.mimeType + ';base64,' + b.data,
          alt: 'image (' + b.mimeType + ', ' + base64Size(b.data) + ' bytes)' }));
        continue;
      }
      if (b.type === 'audio' && AUDIO_TYPES.test(b.mimeType || '')) {
        // A player, with the placeholder as its caption.
        box.append(el('figure', { class: 'content-audio' },
          el('audio', { controls: true, preload: 'metadata', src: 'data:' + b.mimeType + ';base64,' + b.data }),
          el('figcaption', { class: 'content-placeholder mono', 'data-type': 'audio', text: '[audio ' + b.mimeType + ', ' + base64Size(b.data) + ' bytes]' })));
        continue;
      }
      let text;
      if (b.type === 'resource' && b.resource) {
        const r = b.resource;
        const size = 'blob' in r ? base64Size(r.blob) : new TextEncoder().encode(r.text || '').length;
        text = '[resource ' + r.uri + (r.mimeType ? ', ' + r.mimeType : '') + ', ' + size + ' bytes]';
      } else if (b.type === 'resource_link') {
        text = '[resource link ' + b.uri + (b.mimeType ? ', ' + b.mimeType : '') + (b.size != null ? ', ' + b.size + ' bytes' : '') + ']';
      } else {
        text = '[' + b.type + ' ' + (b.mimeType || '') + ', ' + base64Size(b.data) + ' bytes]';
      }
      box.append(el('p', { class: 'content-placeholder mono', 'data-type': b.type, text }));
    }
    return box.childElementCount ? box : null;
  }

  function resultView(res) {
    const box = el('div', { class: 'result' });
    if (!res.success && res.error) box.append(el('p', { class: 'error result-error', text: res.error }));
    if (res.output !== undefined && !(typeof res.output === 'string' && res.output === res.error)) {
      box.append(el('pre', { class: 'output', text: typeof res.output === 'string' ? res.output : JSON.stringify(res.output, null, 2) }));
    }
    const content = Array.isArray(res._lcp_content) ? contentView(res._lcp_content) : null;
    if (content) box.append(content);
    if (res.traceback) {
      box.append(el('details', { class: 'traceback' }, el('summary', { text: 'Traceback' }), el('pre', { text: String(res.traceback) })));
    }
    if (res.prompt_injection) {
      box.append(el('div', { class: 'prompt-injection' }, el('strong', { text: 'prompt_injection ' }),
        el('span', { text: typeof res.prompt_injection === 'string' ? res.prompt_injection : JSON.stringify(res.prompt_injection) })));
    }
    const extra = Object.keys(res).filter((k) => !META.has(k));
    if (extra.length) {
      const dl = el('dl', { class: 'payload' });
      for (const k of extra) {
        const v = res[k];
        dl.append(el('dt', { class: 'mono', text: k }), el('dd', {}, el('pre', { text: typeof v === 'string' ? v : JSON.stringify(v, null, 2) })));
      }
      box.append(el('details', { class: 'payload-keys', open: true }, el('summary', { text: 'payload: ' + extra.join(', ') }), dl));
    }
    return box;
  }

  function appendPrinted(pre, o) {
    pre.hidden = false;
    pre.append(el('span', { class: 'stream-' + o.stream, text: o.text }));
  }

  function appendOutput(o) {
    if (!o.call_id) return;
    const c = state.calls.get(o.call_id);
    if (c) (c.printed = c.printed || []).push({ stream: o.stream, text: o.text });
    const card = $('calls').querySelector('article.call[data-call="' + CSS.escape(o.call_id) + '"]');
    if (!card) return;
    appendPrinted(card.querySelector('.live-output'), o);
  }

  function applyProgress(p) {
    const c = state.calls.get(p.call_id);
    if (!c || c.state !== 'running') return;
    c.progress = { progress: p.progress, total: p.total, message: p.message };
    const card = $('calls').querySelector('article.call[data-call="' + CSS.escape(p.call_id) + '"]');
    if (!card) return;
    const view = progressView(c.progress);
    const old = card.querySelector('.call-progress');
    if (old) old.replaceWith(view);
    else card.querySelector('header').after(view);
  }

  // ------------------------------------------------------------------- log

  function logEvent(ev) {
    const line = describe(ev);
    if (!line) return;
    const log = $('log');
    log.append(el('li', { class: 'ev ev-' + line.cls, 'data-seq': ev.seq },
      el('time', { text: clock(ev.time) }), ' ', el('span', { class: 'what', text: line.what }), ' ', el('span', { text: line.text })));
    while (log.childElementCount > MAX_LOG) log.firstElementChild.remove();
    log.scrollTop = log.scrollHeight;
  }

  function describe(ev) {
    switch (ev.type) {
      case 'call': {
        const c = ev.call;
        if (c.state === 'running') return { cls: 'call', what: 'call', text: c.tool + ' ' + compact(c.args) };
        const r = c.result || {};
        const st = r.success ? r.status_code + ' ok' : r.status_code + ' ' + (r.error || 'failed');
        return { cls: r.success ? 'done' : 'fail', what: 'result', text: c.tool + ' → ' + oneLine(st) };
      }
      case 'tools':
        return { cls: 'call', what: 'reload', text: ev.tools ? ev.tools : 'the tools changed' };
      case 'output':
        return { cls: 'output', what: ev.output.stream || 'output', text: (ev.output.tool ? ev.output.tool + ': ' : '') + ev.output.text.replace(/\n$/, '') };
      case 'request': {
        const h = ev.request;
        const r = h.request || {};
        const who = r.tool ? r.tool + ' ' : '';
        switch (h.type) {
          case 'opened':
            return { cls: 'ask', what: 'asks', text: who + r.kind + ': ' + oneLine(r.title || r.prompt || r.label || '') };
          case 'answered': case 'failed': case 'timed_out': case 'withdrawn': {
            const a = h.response || {};
            let t = who + r.kind + ' ' + h.type.replace('_', ' ');
            if (a.action === 'submit' && r.kind !== 'form') t += ': ' + oneLine(String(a.value));
            else if (a.action === 'submit') t += ': ' + compact(a.value);
            else t += ' (' + a.action + (a.reason ? ': ' + oneLine(a.reason) : '') + ')';
            if (h.by) t += ' by ' + h.by.replace('_', ' ');
            return { cls: h.type === 'answered' ? 'answer' : 'fail', what: 'answer', text: t };
          }
          case 'granted': return { cls: 'answer', what: 'always', text: 'allowed for the session: ' + h.grant.library + ' / ' + h.grant.label };
          case 'revoked': return { cls: 'answer', what: 'revoked', text: h.grant.library + ' / ' + h.grant.label };
        }
        return null;
      }
    }
    return null;
  }

  function compact(v) {
    const s = JSON.stringify(v === undefined ? {} : v);
    return s.length > 200 ? s.slice(0, 200) + '…' : s;
  }

  function oneLine(s) {
    s = String(s).replace(/\s+/g, ' ').trim();
    return s.length > 200 ? s.slice(0, 200) + '…' : s;
  }

  loadTools();
  connect();
})();
