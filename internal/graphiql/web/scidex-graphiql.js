// SciDEX substrate — GraphiQL page script.
//
// Runs after the UMD builds of React, ReactDOM, graphql-ws (window.graphqlWs)
// and GraphiQL (window.GraphiQL). It renders GraphiQL into #graphiql and wires
// the token bar:
//
//   - the token is kept in localStorage under TOKEN_KEY;
//   - every HTTP request (queries, mutations, introspection) carries
//     "Authorization: Bearer <token>" unless the request already has an
//     Authorization header (typed in GraphiQL's Headers editor, which wins);
//   - the websocket used for subscriptions (graphql-transport-ws) sends
//     {"Authorization": "Bearer <token>"} as its connection_init payload,
//     merged under the Headers editor's headers in the same way.
//
// The page's Content-Security-Policy allows scripts from 'self' only, so this
// file must stay an external script: no inline code, no eval.
(function () {
  'use strict';

  // GraphiQL's dialogs (react-remove-scroll) insert a <style> element and tag
  // it with window.__webpack_nonce__ when that is set; the CSP allows styles
  // carrying the page's nonce. The nonce reaches us on this script element.
  var self = document.currentScript;
  if (self && self.nonce) {
    window.__webpack_nonce__ = self.nonce;
  }

  var TOKEN_KEY = 'scidex:graphiql:token';

  var DEFAULT_QUERY = [
    '# Welcome to the SciDEX substrate.',
    '#',
    '# 1. Paste your API token (a JWT) into "Token"',
    '#    at the top of the page. Requests then carry',
    '#    "Authorization: Bearer <token>"; websocket',
    '#    subscriptions send it in connection_init.',
    '#    A development token comes from',
    '#      scidex token --sub <you> --kind human',
    '#        --permissions viewer',
    '# 2. Run with Ctrl-Enter or the run button:',
    '#    "me" shows who the server thinks you are.',
    '# 3. The book icon (left) opens the schema docs.',
    '#',
    '# An Authorization header set in the Headers',
    '# tab below wins over the token field.',
    '',
    '{',
    '  me {',
    '    id',
    '    kind',
    '    permissions',
    '  }',
    '}',
    ''
  ].join('\n');

  var mount = document.getElementById('graphiql');
  var input = document.getElementById('scidex-token');
  var form = document.getElementById('scidex-token-form');
  var showButton = document.getElementById('scidex-token-show');
  var clearButton = document.getElementById('scidex-token-clear');
  var state = document.getElementById('scidex-token-state');

  function fail(message) {
    mount.textContent = '';
    var p = document.createElement('p');
    p.className = 'scidex-loading scidex-error';
    p.textContent = message;
    mount.appendChild(p);
  }

  if (!window.React || !window.ReactDOM || !window.GraphiQL) {
    fail('GraphiQL could not load its scripts. Reload the page; if that does not help, the server is missing its embedded assets.');
    return;
  }

  // ---- token storage -------------------------------------------------------

  // normalizeToken accepts a pasted "Bearer xyz" as well as a bare "xyz".
  function normalizeToken(raw) {
    return String(raw || '').trim().replace(/^bearer\s+/i, '').trim();
  }

  function readToken() {
    try {
      return normalizeToken(window.localStorage.getItem(TOKEN_KEY));
    } catch (e) {
      return normalizeToken(input.value); // storage disabled: use the field
    }
  }

  function writeToken(raw) {
    var token = normalizeToken(raw);
    try {
      if (token) {
        window.localStorage.setItem(TOKEN_KEY, token);
      } else {
        window.localStorage.removeItem(TOKEN_KEY);
      }
    } catch (e) {
      // Storage disabled (private mode, policy): readToken falls back to the field.
    }
    showState();
  }

  function showState() {
    var set = readToken() !== '';
    state.textContent = set ? 'token set' : 'no token';
    state.className = 'scidex-token-state' + (set ? ' scidex-token-set' : '');
  }

  // ---- headers -------------------------------------------------------------

  function hasAuthorization(headers) {
    return Object.keys(headers || {}).some(function (k) {
      return k.toLowerCase() === 'authorization';
    });
  }

  // withToken returns headers plus the token's Authorization header, unless
  // headers already has one (in any letter case): explicit headers win.
  function withToken(headers) {
    var out = {};
    var token = readToken();
    if (token && !hasAuthorization(headers)) {
      out.Authorization = 'Bearer ' + token;
    }
    Object.keys(headers || {}).forEach(function (k) {
      out[k] = headers[k];
    });
    return out;
  }

  // authFetch is the fetch GraphiQL's fetcher uses for HTTP. GraphiQL has
  // already merged the Headers editor into init.headers.
  function authFetch(resource, init) {
    var opts = Object.assign({}, init);
    var headers = new Headers(opts.headers || {});
    var token = readToken();
    if (token && !headers.has('Authorization')) {
      headers.set('Authorization', 'Bearer ' + token);
    }
    opts.headers = headers;
    return window.fetch(resource, opts);
  }

  // ---- fetcher -------------------------------------------------------------

  var endpoint = mount.dataset.endpoint;
  var subscriptionEndpoint = mount.dataset.subscriptionEndpoint || endpoint;

  function websocketURL(path) {
    var u = new URL(path, window.location.href);
    u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
    u.hash = '';
    return u.href;
  }

  // The headers of the Headers editor at the last operation, for the
  // websocket connection_init payload (graphql-ws reads it on connect).
  var editorHeaders = {};
  var wsClient = null;

  function newWsClient() {
    if (!window.graphqlWs || typeof window.graphqlWs.createClient !== 'function') {
      return null;
    }
    return window.graphqlWs.createClient({
      url: websocketURL(subscriptionEndpoint),
      // Connect on the first subscription, close when the last one ends, so
      // each connection_init carries the current token.
      lazy: true,
      connectionParams: function () {
        var params = withToken(editorHeaders);
        return Object.keys(params).length ? params : undefined;
      }
    });
  }

  function newFetcher() {
    if (wsClient) {
      wsClient.dispose();
    }
    wsClient = newWsClient();
    var options = { url: endpoint, fetch: authFetch };
    if (wsClient) {
      options.wsClient = wsClient;
    } else {
      options.subscriptionUrl = websocketURL(subscriptionEndpoint);
      options.wsConnectionParams = withToken({});
    }
    var base = window.GraphiQL.createFetcher(options);
    return function fetcher(params, opts) {
      editorHeaders = (opts && opts.headers) || {};
      return base(params, opts);
    };
  }

  // ---- render --------------------------------------------------------------

  var root = window.ReactDOM.createRoot(mount);

  // render (re)creates the fetcher. GraphiQL re-reads the schema whenever the
  // fetcher changes, which is what we want after the token changed: the
  // schema a server shows can depend on who asks.
  function render() {
    root.render(window.React.createElement(window.GraphiQL, {
      fetcher: newFetcher(),
      defaultQuery: DEFAULT_QUERY,
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: true
    }));
  }

  // ---- token bar -----------------------------------------------------------

  var committed = readToken();
  input.value = committed;
  showState();

  // commit applies a finished edit (Enter, leaving the field, Clear).
  function commit() {
    writeToken(input.value);
    var token = readToken();
    if (token !== committed) {
      committed = token;
      render();
    }
  }

  // Store on every keystroke, so that a query run straight from the field
  // (Ctrl-Enter) already carries the token.
  input.addEventListener('input', function () { writeToken(input.value); });
  input.addEventListener('change', commit);
  form.addEventListener('submit', function (ev) {
    ev.preventDefault();
    commit();
  });

  showButton.addEventListener('click', function () {
    var show = input.type === 'password';
    input.type = show ? 'text' : 'password';
    showButton.textContent = show ? 'Hide' : 'Show';
    showButton.setAttribute('aria-pressed', String(show));
  });

  clearButton.addEventListener('click', function () {
    input.value = '';
    commit();
    input.focus();
  });

  // Keep several open tabs in step.
  window.addEventListener('storage', function (ev) {
    if (ev.key === TOKEN_KEY || ev.key === null) {
      input.value = readToken();
      commit();
    }
  });

  render();
})();
