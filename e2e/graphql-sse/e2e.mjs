// A running scidex server's Server-Sent Events on /graphql, driven by the
// graphql-sse protocol's reference client (the npm graphql-sse package) in its
// distinct connections mode
// (https://github.com/enisdenjo/graphql-sse/blob/master/PROTOCOL.md): each
// operation is its own POST with Accept: text/event-stream.
//
// Run by cmd/scidex/graphqlsse_e2e_test.go, which starts the server and mints
// the token. By hand:
//
//   SCIDEX_URL=http://127.0.0.1:8080 SCIDEX_TOKEN=$(scidex token --sub ada) node e2e.mjs
//
// Every check prints one line, "ok   <name> (<ms> ms)" or
// "FAIL <name>: <why>"; the exit code is 0 only when all of them passed.
// Nothing sleeps: every wait is on a sink call or a promise, bounded by a
// deadline that fails the check.

import { createClient, NetworkError } from 'graphql-sse';

const TIMEOUT_MS = 15_000;

function required(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`e2e: ${name} is not set`);
    process.exit(2);
  }
  return value;
}

const httpURL = required('SCIDEX_URL').replace(/\/+$/, '');
const token = required('SCIDEX_TOKEN');

/** within resolves as promise does, or rejects once ms have passed. */
function within(ms, what, promise) {
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** Inbox queues the sink calls of one operation for a check to take in order. */
class Inbox {
  #items = [];
  #waiters = [];

  push(item) {
    const waiter = this.#waiters.shift();
    if (waiter) waiter(item);
    else this.#items.push(item);
  }

  take(what) {
    if (this.#items.length > 0) return Promise.resolve(this.#items.shift());
    return within(TIMEOUT_MS, what, new Promise((resolve) => this.#waiters.push(resolve)));
  }
}

function check(cond, message) {
  if (!cond) throw new Error(message);
}

const show = (v) => JSON.stringify(v);

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

/** client is a graphql-sse client that never retries, so a refusal reaches the sink. */
function client(bearer) {
  return createClient({
    url: `${httpURL}/graphql`,
    headers: { Authorization: `Bearer ${bearer}` },
    retryAttempts: 0,
  });
}

/** subscribe feeds every sink call of one operation into an inbox. */
function subscribe(c, payload) {
  const inbox = new Inbox();
  const dispose = c.subscribe(payload, {
    next: (value) => inbox.push({ kind: 'next', value }),
    error: (error) => inbox.push({ kind: 'error', error }),
    complete: () => inbox.push({ kind: 'complete' }),
  });
  return { inbox, dispose };
}

const checks = [];
const test = (name, fn) => checks.push({ name, fn });

test('next: a subscription receives the event of an artifact created over HTTP', async () => {
  const { poll } = await graphql('{ poll(limit: 1) { cursor } }');
  const c = client(token);
  const sub = subscribe(c, {
    query: `subscription($since: Cursor) { events(types: ["hypothesis.created"], since: $since) { type ref cursor actor { id } artifact { title } } }`,
    variables: { since: poll.cursor },
  });
  try {
    const { createArtifact: r } = await graphql(
      `mutation($in: CreateArtifactInput!) { createArtifact(input: $in) { __typename ... on WriteSuccess { ref } } }`,
      { in: { type: 'hypothesis', title: 'TREM2 over graphql-sse', content: {} } },
    );
    check(r.__typename === 'WriteSuccess', `create: ${show(r)}`);
    const got = await sub.inbox.take('the event');
    const e = got.value?.data?.events;
    check(got.kind === 'next' && !got.value.errors && e, `got ${got.kind} ${show(got.value ?? got.error)}`);
    check(e.type === 'hypothesis.created' && e.ref === r.ref && e.actor.id === 'ada' && e.artifact.title === 'TREM2 over graphql-sse' && e.cursor,
      `the event: ${show(e)}, want ${r.ref}`);
  } finally {
    sub.dispose();
    c.dispose();
  }
});

test('complete: a query is one next, then complete', async () => {
  const c = client(token);
  const sub = subscribe(c, { query: '{ poll(limit: 1) { cursor } }' });
  try {
    const got = await sub.inbox.take('the result');
    check(got.kind === 'next' && !got.value.errors && got.value.data?.poll?.cursor, `got ${got.kind} ${show(got.value ?? got.error)}`);
    const end = await sub.inbox.take('complete');
    check(end.kind === 'complete', `then ${end.kind} ${show(end.value ?? end.error)}`);
  } finally {
    c.dispose();
  }
});

test('error: a document that does not validate is a next with its errors, then complete', async () => {
  const c = client(token);
  const sub = subscribe(c, { query: 'subscription { events { nope } }' });
  try {
    const got = await sub.inbox.take('the errors');
    check(got.kind === 'next' && got.value.errors?.some((e) => e.message.includes('nope')), `got ${got.kind} ${show(got.value ?? got.error)}`);
    const end = await sub.inbox.take('complete');
    check(end.kind === 'complete', `then ${end.kind}`);
  } finally {
    c.dispose();
  }
});

test('401: a bad token is refused before the stream opens, with the error body a POST gets', async () => {
  const c = client('not.a.jwt');
  const sub = subscribe(c, { query: 'subscription { events { id } }' });
  try {
    const got = await sub.inbox.take('the refusal');
    check(got.kind === 'error' && got.error instanceof NetworkError && got.error.response?.status === 401,
      `got ${got.kind} ${got.error?.message ?? show(got.value)}`);
    const body = await got.error.response.json();
    const e = body.errors?.[0];
    check(e?.extensions?.code === 'UNAUTHENTICATED' && e.extensions.requestId && e.message.startsWith('unauthenticated'), `body ${show(body)}`);
  } finally {
    c.dispose();
  }
});

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
const results = [];
for (const c of checks) results.push(await run(c));
const failed = results.filter((ok) => !ok).length;
const elapsed = Math.round(performance.now() - started);
console.log(failed === 0 ? `all ${results.length} checks passed (${elapsed} ms)` : `${failed} of ${results.length} checks failed (${elapsed} ms)`);
process.exit(failed === 0 ? 0 : 1);
