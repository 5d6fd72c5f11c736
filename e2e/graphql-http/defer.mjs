// @defer over HTTP as a client reads it: meros (the multipart reader of urql
// and Relay) on a fetch response to a POST that accepts multipart/mixed.
// Environment as audit.mjs's (SCIDEX_URL, SCIDEX_TOKEN). Prints one JSON line:
// the response's content type, each part's hasNext and labels, and whether
// the parts merged as a client merges them equal the answer without @defer.
// cmd/scidex/graphqlhttp_e2e_test.go runs it and checks the line.
import { meros } from 'meros/browser';

const url = new URL('/graphql', process.env.SCIDEX_URL).toString();
const token = process.env.SCIDEX_TOKEN;

const nodeFields = (deferred) => deferred
  ? 'ref title ... @defer(label: "author") { createdBy { id kind } } ... @defer(label: "signals") { signals { vote { score count } } }'
  : 'ref title createdBy { id kind } signals { vote { score count } }';
const query = (deferred) => `{ artifacts(type: "tool", first: 5, orderBy: {field: TITLE, direction: ASC}) { totalCount edges { node { ${nodeFields(deferred)} } } } }`;

async function post(q, accept) {
  return fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: accept, Authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: q }),
  });
}

// sorted is v with every object's keys in order, for comparing answers.
function sorted(v) {
  if (Array.isArray(v)) return v.map(sorted);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])]));
  return v;
}

const plain = await (await post(query(false), 'application/json')).json();
const res = await post(query(true), 'multipart/mixed;deferSpec=20220824, application/json');
const out = { status: res.status, contentType: res.headers.get('content-type'), parts: [], errors: [] };
const parts = await meros(res);
if (typeof parts[Symbol.asyncIterator] !== 'function') {
  out.errors.push('not a multipart response: ' + (await parts.text()).slice(0, 300));
} else {
  let data;
  for await (const part of parts) {
    if (!part.json) {
      out.errors.push('a part that is not JSON: ' + String(part.body).slice(0, 300));
      continue;
    }
    const body = part.body;
    const labels = [];
    if (data === undefined) {
      data = body.data;
    } else {
      for (const item of body.incremental ?? []) {
        labels.push(item.label);
        if (item.errors) out.errors.push(...item.errors.map((e) => e.message));
        let at = data;
        for (const key of item.path) at = at[key];
        Object.assign(at, item.data);
      }
    }
    if (body.errors) out.errors.push(...body.errors.map((e) => e.message));
    out.parts.push({ hasNext: body.hasNext, labels });
  }
  out.mergedEqualsPlain = JSON.stringify(sorted(data)) === JSON.stringify(sorted(plain.data));
  out.tools = plain.data?.artifacts?.edges?.length ?? 0;
}
console.log(JSON.stringify(out));
