// The artifact page: read the artifact, follow it over EventSource, poll on a
// long disconnection. See internal/livepage/livepage.go for the design.
'use strict';
(() => {
  const LONG_DISCONNECT_MS = 4000; // a stream down this long: poll meanwhile
  const POLL_MS = 1000;
  const REOPEN_MS = 2000; // after the server ended or refused the stream

  const path = location.pathname.slice('/artifacts/'.length);
  const pinned = decodeURIComponent(path);
  const ref = pinned.split('@')[0]; // the page follows the artifact, every version
  const $ = (id) => document.getElementById(id);
  // The documents the page sends: in the page, as the server registers them.
  const OPS = JSON.parse($('operations').textContent);

  // The page's state, for people (the mode badge) and the end-to-end test.
  const live = window.scidexLive = {
    ref, mode: 'loading', title: null, revision: null, cursor: null,
    events: [], duplicates: 0, streamRepeats: 0, renders: 0, polls: 0, streams: 0, error: null,
  };
  const seen = new Map(); // event id → what brought it first ('stream' or 'poll')

  function setMode(m) {
    live.mode = m;
    const el = $('mode');
    el.textContent = m;
    el.className = 'mode ' + m;
  }

  function problem(msg) {
    live.error = msg;
    $('problem').textContent = msg || '';
  }

  class APIError extends Error {
    constructor(msg, code) { super(msg); this.code = code; }
  }

  // gql runs a query with GET (a read: the cookie needs no CSRF token).
  async function gql(query, variables) {
    const u = '/graphql?query=' + encodeURIComponent(query) +
      '&variables=' + encodeURIComponent(JSON.stringify(variables || {}));
    const r = await fetch(u, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
    let body = null;
    try { body = await r.json(); } catch (_) { /* not JSON */ }
    const errs = (body && body.errors) || [];
    if (errs.length) {
      const code = (errs[0].extensions && errs[0].extensions.code) || '';
      throw new APIError(errs.map((e) => e.message).join('; '), code);
    }
    if (!r.ok || !body) throw new APIError('the server answered ' + r.status, '');
    return body.data;
  }

  // --- the artifact ---

  const READ = OPS.read;

  let reading = null; // the read in flight
  let again = false; // another event came during it

  function refresh() {
    if (reading) { again = true; return reading; }
    reading = (async () => {
      do {
        again = false;
        try {
          const d = await gql(READ, { ref });
          render(d.artifact);
        } catch (e) {
          problem('could not read ' + ref + ': ' + e.message);
        }
      } while (again);
      reading = null;
    })();
    return reading;
  }

  function text(tag, s) {
    const el = document.createElement(tag);
    el.textContent = s;
    return el;
  }

  function render(a) {
    if (!a) {
      $('artifact').hidden = true;
      problem('no artifact ' + ref + ' (or you may not read it)');
      return;
    }
    $('artifact').hidden = false;
    $('title').textContent = a.title;
    document.title = a.title + ' · SciDEX';
    $('meta').textContent = a.type + ' · ' + a.ref + ' · revision ' + a.revision +
      ' · updated ' + a.updatedAt + ' by ' + a.updatedBy.id + (a.lifecycleState ? ' · ' + a.lifecycleState : '') +
      (pinned !== ref ? ' · (the page shows the current version of ' + pinned + ')' : '');
    $('content').textContent = JSON.stringify(a.content, null, 2);
    const links = $('links');
    links.replaceChildren(...a.links.edges.map(({ node: l }) => {
      const out = l.from.ref.split('@')[0] === ref;
      const other = out ? l.to : l.from;
      return text('li', (out ? '→ ' : '← ') + l.predicate + ' ' + other.title + ' (' + other.ref.split('@')[0] + ')');
    }));
    if (!a.links.edges.length) links.replaceChildren(text('li', 'none'));
    const sig = $('signals');
    sig.replaceChildren(...a.signals.kinds.map((k) => text('li',
      k.kind + (k.dimension ? ' / ' + k.dimension : '') + ': ' + (k.value === null ? '–' : k.value) +
      (k.unit ? ' ' + k.unit : '') + ' (' + k.count + ', ' + k.aggregation + ')')));
    if (!a.signals.kinds.length) sig.replaceChildren(text('li', 'none'));
    live.title = a.title;
    live.revision = a.revision;
    live.renders++;
  }

  // --- events: the stream, and polling when it is down ---

  // An event is applied once, whoever brought it: the stream resuming after
  // Last-Event-ID may repeat what a poll brought while it was down (a
  // duplicate); it never repeats what it brought itself (a streamRepeat: the
  // server did not resume after Last-Event-ID).
  function apply(e, via) {
    const id = Number(e.id);
    if (seen.has(id)) {
      live.duplicates++;
      if (via === 'stream' && seen.get(id) === 'stream') live.streamRepeats++;
      return;
    }
    seen.set(id, via);
    live.events.push({ id, type: e.type, via });
    live.cursor = e.cursor;
    refresh();
  }

  const FOLLOW = OPS.follow;
  let stream = null;
  let downTimer = null;
  let reopenTimer = null;

  function openStream() {
    clearTimeout(reopenTimer);
    const u = '/graphql?query=' + encodeURIComponent(FOLLOW) +
      '&variables=' + encodeURIComponent(JSON.stringify({ ref, since: live.cursor }));
    const es = new EventSource(u); // same origin: the cookie goes with it
    stream = es;
    live.streams++;
    setMode('connecting');
    es.onopen = () => {
      clearTimeout(downTimer);
      downTimer = null;
      setMode('live');
      stopPolling();
    };
    es.addEventListener('next', (m) => {
      let r;
      try { r = JSON.parse(m.data); } catch (_) { return; }
      if (r.errors && r.errors.length) { // refused, or the server is going: `complete` follows
        problem(r.errors.map((x) => x.message).join('; '));
        return;
      }
      if (r.data && r.data.artifactEvents) apply(r.data.artifactEvents, 'stream');
    });
    es.addEventListener('complete', () => { es.close(); ended(es); });
    es.onerror = () => {
      if (es.readyState === EventSource.CLOSED) { ended(es); return; }
      // CONNECTING: the browser reconnects by itself, with Last-Event-ID.
      setMode('reconnecting');
      if (!downTimer) downTimer = setTimeout(() => { downTimer = null; startPolling(); }, LONG_DISCONNECT_MS);
    };
  }

  // ended: the stream is over for good (the server completed or refused
  // it): poll, and open a new one, from the cursor, a little later.
  function ended(es) {
    if (stream !== es) return;
    stream = null;
    startPolling();
    reopenTimer = setTimeout(openStream, REOPEN_MS);
  }

  const CATCH_UP = OPS.catchUp;
  let polling = false;

  function startPolling() {
    setMode('polling');
    if (polling) return;
    polling = true;
    (async () => {
      // The artifact's events: its ref unpinned, or pinned to a version.
      const filter = { or: [{ '==': [{ var: 'ref' }, ref] }, { in: [ref + '@', { var: 'ref' }] }] };
      while (polling) {
        try {
          let more = true;
          while (more && polling) {
            const d = await gql(CATCH_UP, { since: live.cursor, filter });
            live.polls++;
            d.poll.events.forEach((e) => apply(e, 'poll'));
            if (d.poll.cursor) live.cursor = d.poll.cursor;
            more = d.poll.hasMore;
          }
        } catch (e) {
          problem('polling: ' + e.message);
        }
        await new Promise((ok) => setTimeout(ok, POLL_MS));
      }
    })();
  }

  function stopPolling() { polling = false; }

  // --- the session ---

  async function begin() {
    try {
      const head = await gql(OPS.head);
      live.cursor = head.poll.cursor;
    } catch (e) {
      problem('could not read the event log: ' + e.message);
      return;
    }
    await refresh();
    openStream();
  }

  async function login(ev) {
    ev.preventDefault();
    const token = $('token').value.trim();
    const r = await fetch('/auth/session', {
      method: 'POST', credentials: 'same-origin', headers: { Authorization: 'Bearer ' + token },
    });
    let body = null;
    try { body = await r.json(); } catch (_) { /* not JSON */ }
    if (!r.ok) {
      $('login-error').textContent = (body && body.errors && body.errors[0].message) || ('the server answered ' + r.status);
      return;
    }
    $('token').value = '';
    $('login').hidden = true;
    $('who').textContent = body.actor.id;
    begin();
  }

  async function start() {
    $('login').addEventListener('submit', login);
    const r = await fetch('/auth/session', { credentials: 'same-origin' });
    if (r.status !== 200) {
      setMode('logged out');
      $('login').hidden = false;
      return;
    }
    $('who').textContent = (await r.json()).actor.id;
    begin();
  }

  start();
})();
