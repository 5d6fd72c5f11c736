// Conformance of a running scidex server to graphql-transport-ws
// (https://github.com/enisdenjo/graphql-ws/blob/master/PROTOCOL.md), checked
// with the protocol's reference client, the npm graphql-ws package, and, for
// the close codes that client never provokes, a raw `ws` socket speaking the
// protocol by hand.
//
// Run by cmd/scidex/graphqlws_e2e_test.go, which starts the server and mints
// the tokens. By hand:
//
//   SCIDEX_URL=http://127.0.0.1:8080 SCIDEX_TOKEN=$(scidex token --sub ada) \
//   SCIDEX_SHORT_TOKEN=$(scidex token --sub ada --ttl 6s) node conformance.mjs
//
// Every check prints one line, "ok   <name> (<ms> ms)" or
// "FAIL <name>: <why>"; the exit code is 0 only when all of them passed.
// Nothing sleeps: every wait is on a message, an event or a promise, bounded
// by a deadline that fails the check.

import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const PROTOCOL = 'graphql-transport-ws';
const TIMEOUT_MS = 15_000;

function required(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`conformance: ${name} is not set`);
    process.exit(2);
  }
  return value;
}

const httpURL = required('SCIDEX_URL').replace(/\/+$/, '');
const wsURL = httpURL.replace(/^http/, 'ws') + '/graphql';
const token = required('SCIDEX_TOKEN');
const shortToken = required('SCIDEX_SHORT_TOKEN'); // expires a few seconds after it was minted
const authPayload = { Authorization: `Bearer ${token}` };

// ---------------------------------------------------------------------------
// Waiting without sleeping.

/** within resolves as promise does, or rejects once ms have passed. */
function within(ms, what, promise) {
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** deferred is a promise with its resolve function at hand. */
function deferred() {
  let resolve;
  const promise = new Promise((r) => { resolve = r; });
  return { promise, resolve };
}

/** Inbox queues what arrives (messages, sink calls) for a check to take in order. */
class Inbox {
  #items = [];
  #waiters = [];

  push(item) {
    const waiter = this.#waiters.shift();
    if (waiter) waiter(item);
    else this.#items.push(item);
  }

  take(what, ms = TIMEOUT_MS) {
    if (this.#items.length > 0) return Promise.resolve(this.#items.shift());
    let waiter;
    const next = new Promise((resolve) => { waiter = resolve; this.#waiters.push(resolve); });
    return within(ms, what, next).catch((err) => {
      this.#waiters = this.#waiters.filter((w) => w !== waiter);
      throw err;
    });
  }

  get pending() {
    return [...this.#items];
  }
}

function check(cond, message) {
  if (!cond) throw new Error(message);
}

const show = (v) => JSON.stringify(v);

// ---------------------------------------------------------------------------
// HTTP: the writes whose events the subscriptions must deliver.

async function graphql(query, variables) {
  const res = await fetch(`${httpURL}/graphql`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const body = await res.json();
  if (!res.ok || body.errors) throw new Error(`POST /graphql: HTTP ${res.status} ${show(body)}`);
  return body.data;
}

/** tail is the end of the event log now: subscribing since it misses no later write. */
async function tail() {
  const { poll } = await graphql('{ poll(limit: 1) { cursor } }');
  check(poll.cursor, `poll gave no cursor: ${show(poll)}`);
  return poll.cursor;
}

async function createHypothesis(title) {
  const { createArtifact: r } = await graphql(
    `mutation($in: CreateArtifactInput!) { createArtifact(input: $in) { __typename ... on WriteSuccess { ref } } }`,
    { in: { type: 'hypothesis', title, content: {} } },
  );
  check(r.__typename === 'WriteSuccess', `create ${title}: ${show(r)}`);
  return r.ref;
}

const eventsSince = `subscription($since: Cursor) {
  events(types: ["hypothesis.created"], since: $since) { type ref cursor actor { id } }
}`;

// ---------------------------------------------------------------------------
// The graphql-ws client.

/**
 * tap records every frame of the client's socket, both ways, so checks can
 * see what went over the wire and not only what the client chose to report.
 */
function tappedWebSocket(frames) {
  return class TappedWebSocket extends WebSocket {
    constructor(...args) {
      super(...args);
      this.on('message', (data) => frames.push({ dir: 'in', msg: JSON.parse(String(data)) }));
    }

    send(data, ...rest) {
      frames.push({ dir: 'out', msg: JSON.parse(String(data)) });
      return super.send(data, ...rest);
    }
  };
}

/**
 * connect makes a graphql-ws client that connects at once and never retries,
 * with promises for its first connection and its first close.
 */
function connect({ connectionParams = authPayload, frames } = {}) {
  const connected = deferred();
  const closed = deferred();
  const client = createClient({
    url: wsURL,
    webSocketImpl: frames ? tappedWebSocket(frames) : WebSocket,
    connectionParams,
    lazy: false,
    retryAttempts: 0,
    onNonLazyError: () => {}, // the checks look at on.closed and the sinks instead
    on: {
      connected: () => connected.resolve(),
      closed: (event) => closed.resolve(event),
    },
  });
  return { client, connected: connected.promise, closed: closed.promise };
}

/** subscribe feeds every sink call of one operation into an inbox. */
function subscribe(client, payload) {
  const inbox = new Inbox();
  const unsubscribe = client.subscribe(payload, {
    next: (value) => inbox.push({ kind: 'next', value }),
    error: (error) => inbox.push({ kind: 'error', error }),
    complete: () => inbox.push({ kind: 'complete' }),
  });
  return { inbox, unsubscribe };
}

/** nextEvent takes the next sink call, which must be a next carrying an event. */
async function nextEvent(sub, what) {
  const got = await sub.inbox.take(what);
  check(got.kind === 'next' && !got.value.errors && got.value.data?.events,
    `${what}: got ${got.kind} ${show(got.value ?? got.error)}`);
  return got.value.data.events;
}

/** errorText flattens what a sink's error received: GraphQL errors or a CloseEvent. */
function errorText(error) {
  if (Array.isArray(error)) return error.map((e) => e.message).join('; ');
  if (error && typeof error.code === 'number') return `close ${error.code} ${error.reason}`;
  return String(error?.message ?? error);
}

// ---------------------------------------------------------------------------
// A raw socket, for what the graphql-ws client never sends.

class RawSocket {
  constructor() {
    this.inbox = new Inbox();
    this.ws = new WebSocket(wsURL, PROTOCOL);
    this.opened = within(TIMEOUT_MS, 'websocket open', new Promise((resolve, reject) => {
      this.ws.once('open', resolve);
      this.ws.once('error', reject);
    }));
    this.closed = new Promise((resolve) => {
      this.ws.once('close', (code, reason) => resolve({ code, reason: String(reason) }));
    });
    this.ws.on('message', (data) => this.inbox.push(JSON.parse(String(data))));
    this.ws.on('error', () => {}); // a refused socket also closes; the checks look at the close
  }

  static async open() {
    const s = new RawSocket();
    await s.opened;
    return s;
  }

  send(msg) {
    this.ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg));
  }

  async expect(type, id) {
    const m = await this.inbox.take(`${type} message`);
    check(m.type === type && (id === undefined || m.id === id), `want ${type}${id ? ` ${id}` : ''}, got ${show(m)}`);
    return m;
  }

  async init() {
    this.send({ type: 'connection_init', payload: authPayload });
    await this.expect('connection_ack');
  }

  /** expectClose waits for the server's close frame and checks code and reason. */
  async expectClose(code, reason, ms = TIMEOUT_MS) {
    const got = await within(ms, `close ${code}`, this.closed);
    check(got.code === code && (reason === undefined || reason.test(got.reason)),
      `closed ${got.code} "${got.reason}", want ${code} ${reason ?? ''} (unread: ${show(this.inbox.pending)})`);
    return got;
  }

  close() {
    this.ws.terminate();
  }
}

// ---------------------------------------------------------------------------
// The checks. Each throws to fail; the runner prints one line per check.

const checks = [];
const slowChecks = []; // run alongside the others: they wait on the server's timers
const define = (name, fn) => checks.push({ name, fn });
const defineSlow = (name, fn) => slowChecks.push({ name, fn });

define('next: a subscription receives the events of writes made over HTTP, in order', async () => {
  const since = await tail();
  const { client } = connect();
  try {
    const sub = subscribe(client, { query: eventsSince, variables: { since } });
    const refs = [await createHypothesis('ws conformance: first'), await createHypothesis('ws conformance: second')];
    for (const [i, ref] of refs.entries()) {
      const e = await nextEvent(sub, `event ${i + 1}`);
      check(e.type === 'hypothesis.created' && e.ref === ref && e.actor.id === 'ada' && e.cursor,
        `event ${i + 1}: ${show(e)}, want hypothesis.created of ${ref} by ada`);
    }
    sub.unsubscribe();
  } finally {
    await client.dispose();
  }
});

define('complete from the client ends the subscription: nothing more is sent for it', async () => {
  const frames = [];
  const { client } = connect({ frames });
  try {
    const since = await tail();
    const a = subscribe(client, { query: eventsSince, variables: { since } });
    const first = await createHypothesis('ws conformance: before complete');
    const e1 = await nextEvent(a, 'the event before complete');
    check(e1.ref === first, `first event ${show(e1)}`);

    a.unsubscribe(); // sends complete
    const completeAt = frames.findIndex((f) => f.dir === 'out' && f.msg.type === 'complete');
    check(completeAt >= 0, 'the client sent no complete');
    const id = frames[completeAt].msg.id;

    // The server reads a socket's messages in order: once it has answered an
    // operation sent after the complete, it has handled the complete.
    const barrier = subscribe(client, { query: '{ me { id } }' });
    check((await barrier.inbox.take('the barrier query')).kind === 'next', 'barrier query failed');

    // A write after the complete: a second subscription, from the first
    // event's cursor, sees it; the completed one must not.
    const b = subscribe(client, { query: eventsSince, variables: { since: e1.cursor } });
    const second = await createHypothesis('ws conformance: after complete');
    const e2 = await nextEvent(b, 'the event after complete');
    check(e2.ref === second, `second subscription got ${show(e2)}, want ${second}`);

    const late = frames.slice(completeAt + 1).filter((f) => f.dir === 'in' && f.msg.id === id);
    check(late.length === 0, `server sent ${show(late.map((f) => f.msg))} for ${id} after the client's complete`);
    // The client completes the sink itself on unsubscribe; nothing else may follow.
    const calls = a.inbox.pending.map((c) => c.kind);
    check(show(calls) === '["complete"]', `the unsubscribed sink was called with ${show(a.inbox.pending)}`);
  } finally {
    await client.dispose();
  }
});

define("complete from the server ends the client's iterator (a query over the socket)", async () => {
  const { client } = connect();
  try {
    const results = [];
    await within(TIMEOUT_MS, 'the iterator to finish', (async () => {
      for await (const result of client.iterate({ query: '{ me { id } }' })) results.push(result);
    })());
    check(results.length === 1 && results[0].data?.me?.id === 'ada', `iterator yielded ${show(results)}`);
  } finally {
    await client.dispose();
  }
});

for (const [what, query, want] of [
  ['an unknown field', 'subscription { events { nope } }', /nope/],
  ['a syntax error', 'subscription { events( { id } }', /Expected Name/],
]) {
  define(`error: a bad query (${what}) reaches the sink as error`, async () => {
    const frames = [];
    const { client } = connect({ frames });
    try {
      const sub = subscribe(client, { query });
      const got = await sub.inbox.take('the sink to hear of the bad query');
      const wire = frames.filter((f) => f.dir === 'in' && f.msg.id).map((f) => f.msg.type);
      check(got.kind === 'error', `sink got ${got.kind} ${show(got.value)} (on the wire: ${wire.join(', ')}), want error`);
      check(Array.isArray(got.error) && want.test(errorText(got.error)), `error ${show(got.error)}, want ${want}`);
    } finally {
      await client.dispose();
    }
  });
}

define('error: a bad filter reaches the sink as errors and ends the operation', async () => {
  const { client } = connect();
  try {
    const sub = subscribe(client, {
      query: 'subscription($f: JSON) { events(filter: $f) { id } }',
      variables: { f: { frobnicate: [1] } },
    });
    const got = await sub.inbox.take('the sink to hear of the bad filter');
    // The reference server sends errors raised while a subscription is set
    // up as next with errors, then complete; validation errors as error.
    // Either ends the operation.
    if (got.kind === 'error') {
      check(/frobnicate/.test(errorText(got.error)), `error ${show(got.error)}`);
    } else {
      check(got.kind === 'next' && /frobnicate/.test(show(got.value.errors)) && got.value.data == null,
        `sink got ${got.kind} ${show(got.value)}`);
      const end = await sub.inbox.take('complete after the errors');
      check(end.kind === 'complete', `after the errors: ${end.kind}`);
    }
  } finally {
    await client.dispose();
  }
});

define('auth: the token may be given as {"token": "<jwt>"}', async () => {
  const { client, connected } = connect({ connectionParams: { token } });
  try {
    await within(TIMEOUT_MS, 'connection_ack', connected);
    const got = await subscribe(client, { query: '{ me { id } }' }).inbox.take('the answer');
    check(got.kind === 'next' && got.value.data?.me?.id === 'ada', `me: ${show(got.value ?? got.error)}`);
  } finally {
    await client.dispose();
  }
});

for (const [what, connectionParams] of [
  ['a bad token', { Authorization: 'Bearer not.a.jwt' }],
  ['no token', {}],
]) {
  define(`4403: ${what} is refused; the code reaches on.closed and the sink`, async () => {
    const { client, closed } = connect({ connectionParams });
    try {
      const sub = subscribe(client, { query: eventsSince, variables: { since: null } });
      const event = await within(TIMEOUT_MS, 'on.closed', closed);
      check(event.code === 4403 && /^Forbidden/.test(event.reason), `on.closed got ${event.code} "${event.reason}"`);
      check(!/eyJ|not\.a\.jwt/.test(event.reason), `the reason echoes the token: "${event.reason}"`);
      const got = await sub.inbox.take('the sink to hear of the close');
      check(got.kind === 'error' && got.error?.code === 4403, `sink got ${got.kind} ${errorText(got.error)}`);
    } finally {
      await client.dispose();
    }
  });
}

defineSlow('4401: the connection closes when its token expires; the code reaches on.closed and the sink', async () => {
  const { client, connected, closed } = connect({ connectionParams: { Authorization: `Bearer ${shortToken}` } });
  try {
    await within(TIMEOUT_MS, 'connection_ack', connected);
    const sub = subscribe(client, { query: eventsSince, variables: { since: null } });
    const event = await within(TIMEOUT_MS, 'the close at expiry', closed);
    check(event.code === 4401 && /expired/i.test(event.reason), `on.closed got ${event.code} "${event.reason}"`);
    // Events of the other checks' writes may come first.
    let got;
    do got = await sub.inbox.take('the sink to hear of the close'); while (got.kind === 'next');
    check(got.kind === 'error' && got.error?.code === 4401, `sink got ${got.kind} ${errorText(got.error)}`);
  } finally {
    await client.dispose();
  }
});

define('subprotocol: the server speaks graphql-transport-ws; ping before connection_init gets pong', async () => {
  const s = await RawSocket.open();
  try {
    check(s.ws.protocol === PROTOCOL, `negotiated "${s.ws.protocol}"`);
    s.send({ type: 'ping', payload: { n: 1 } });
    const pong = await s.expect('pong');
    check(show(pong.payload) === '{"n":1}', `pong payload ${show(pong.payload)}`);
    await s.init();
  } finally {
    s.close();
  }
});

for (const [what, message] of [
  ['not JSON', '{"type": "connection_init"'],
  ['no type', '{"payload": {}}'],
  ['an unknown type', '{"type": "subscribe_please", "id": "1"}'],
  ['a type only the server sends', '{"type": "next", "id": "1", "payload": {}}'],
  ['a subscribe without a query', '{"type": "subscribe", "id": "1", "payload": {}}'],
]) {
  define(`4400: a malformed message (${what}) closes the socket`, async () => {
    const s = await RawSocket.open();
    try {
      await s.init();
      s.send(message);
      await s.expectClose(4400);
    } finally {
      s.close();
    }
  });
}

defineSlow('4408: no connection_init within the init timeout closes the socket', async () => {
  const s = await RawSocket.open();
  try {
    await s.expectClose(4408, /Connection initialisation timeout/, 30_000);
  } finally {
    s.close();
  }
});

define('4409: a subscribe reusing an active id closes the socket', async () => {
  const s = await RawSocket.open();
  try {
    await s.init();
    const subscribeMsg = { id: 'dup', type: 'subscribe', payload: { query: eventsSince, variables: { since: null } } };
    s.send(subscribeMsg);
    s.send(subscribeMsg);
    await s.expectClose(4409, /^Subscriber for dup already exists$/);
  } finally {
    s.close();
  }
});

define('4429: a second connection_init closes the socket', async () => {
  const s = await RawSocket.open();
  try {
    await s.init();
    s.send({ type: 'connection_init', payload: authPayload });
    await s.expectClose(4429, /^Too many initialisation requests$/);
  } finally {
    s.close();
  }
});

define('4401: a subscribe before connection_ack closes the socket', async () => {
  const s = await RawSocket.open();
  try {
    s.send({ id: 'early', type: 'subscribe', payload: { query: '{ me { id } }' } });
    await s.expectClose(4401, /^Unauthorized$/);
  } finally {
    s.close();
  }
});

// ---------------------------------------------------------------------------
// The runner: the slow checks start first and run alongside the others, which
// run one at a time so that each sees only its own writes.

async function run({ name, fn }) {
  const start = performance.now();
  try {
    await within(60_000, `end of check "${name}"`, fn());
    console.log(`ok   ${name} (${Math.round(performance.now() - start)} ms)`);
    return true;
  } catch (err) {
    console.log(`FAIL ${name}: ${err?.message ?? err}`);
    return false;
  }
}

const started = performance.now();
const slow = slowChecks.map(run);
const results = [];
for (const c of checks) results.push(await run(c));
results.push(...(await Promise.all(slow)));

const failed = results.filter((ok) => !ok).length;
const total = results.length;
const elapsed = Math.round(performance.now() - started);
console.log(failed === 0 ? `all ${total} checks passed (${elapsed} ms)` : `${failed} of ${total} checks failed (${elapsed} ms)`);
process.exit(failed === 0 ? 0 : 1);
