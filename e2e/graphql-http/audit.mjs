// The graphql-http server audit (GraphQL over HTTP spec conformance) against
// a running scidex server. Environment: SCIDEX_URL (the server's base URL) and
// SCIDEX_TOKEN (a bearer token: this server reads nothing without one unless
// --anonymous-read). Prints one line per audit, "<status> <id> <name>" and the
// reason of those that did not pass, then a summary; exits non-zero when a
// MUST audit fails. cmd/scidex/graphqlhttp_e2e_test.go runs it.
import { serverAudits } from 'graphql-http';

const base = process.env.SCIDEX_URL;
const token = process.env.SCIDEX_TOKEN;
if (!base || !token) {
  console.error('audit.mjs: set SCIDEX_URL and SCIDEX_TOKEN');
  process.exit(2);
}

// Every request the audit makes carries the token, as a client of this
// server would send it.
function fetchWithToken(input, init = {}) {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${token}`);
  return fetch(input, { ...init, headers });
}

const audits = serverAudits({ url: new URL('/graphql', base).toString(), fetchFn: fetchWithToken });
const counts = { ok: 0, notice: 0, warn: 0, error: 0 };
for (const audit of audits) {
  const result = await audit.fn();
  counts[result.status]++;
  const status = result.status.padEnd(6);
  if (result.status === 'ok') {
    console.log(`${status} ${result.id} ${result.name}`);
    continue;
  }
  let body = '';
  try {
    body = await result.response.text();
  } catch {
    // the body was read by the audit already
  }
  console.log(`${status} ${result.id} ${result.name}\n         ${result.reason}` +
    (body ? `\n         status ${result.response.status}, body ${body.slice(0, 300)}` : ''));
}
console.log(`audits: ${audits.length}, ok ${counts.ok}, notice ${counts.notice}, warn ${counts.warn}, error ${counts.error}`);
process.exit(counts.error > 0 ? 1 : 0);
