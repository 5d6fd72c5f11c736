// Package httppost is the http_post runtime: a tool that is an HTTP
// endpoint somebody else runs. A call POSTs the tool's (validated) arguments
// as JSON to the one URL its runtime_config declares, and the JSON body of a
// 2xx answer is the call's output.
//
// # runtime_config
//
//	{"url": "https://units.example/convert", "secret_ref": "UNITS_TOKEN", "timeout_ms": 5000}
//
// url is required: http or https, with a host, without user:password@ and
// without a #fragment. secret_ref (optional) names a secret of the server's
// store (internal/secrets: SCIDEX_SECRET_<NAME> or the secrets file); it is
// sent as "Authorization: Bearer <secret>". timeout_ms (optional) shortens
// the call's deadline. Nothing else is accepted. Check refuses a config that
// breaks any of this, an IP-literal URL the outbound guard would refuse, a
// secret_ref the store does not hold ("secret NAME is not in this server's
// secret store") and one the operator has not granted to the tool's name
// for the URL's host:port (secrets.Store.Granted, compared as the client
// dials it: "secret NAME is not granted to tool T for host:port …"); Run
// refuses the same things again (CodeRefused), before any connection.
//
// The request carries Content-Type and Accept application/json, a
// User-Agent of scidex-http_post/1 and X-Scidex-Tool-Call: <tool_call id>
// (a tool may use it to correlate or deduplicate); nothing of the caller.
//
// # Why it is careful
//
// A tool's URL is written by whoever registers the tool, and the server
// that posts to it sits inside the operator's network. Without a guard a
// tool could point at the metadata service (169.254.169.254), the database
// on localhost or an admin page on 10.0.0.1 and have the server fetch it for
// them, or redirect there. So:
//
//   - The outbound guard (guard.go, code.dny.dev/ssrf) judges the resolved
//     address of every connection in the dialer's Control hook, after
//     resolution and before connect(2): loopback, private, link-local
//     (metadata included), CGNAT, unique local, unspecified, multicast,
//     IPv4-mapped IPv6 and NAT64 forms and the other special-purpose blocks
//     are refused (CodeRefused) before a packet is sent, DNS rebinding
//     included, unless the operator allow-lists the URL's host:port
//     (Options.Allow; matched as written, see there).
//   - No redirect is followed: a 3xx is refused (CodeRefused), naming only
//     the Location's host.
//   - No proxy from the environment is used (the guard would judge the
//     proxy, not the tool).
//   - The response is capped (Options.MaxResponseBytes, by default
//     runtimes.MaxOutputBytes: CodeOutputTooLarge), and so are the connect
//     (CodeUnreachable), the wait for headers and the whole call
//     (CodeWallTimeout: the shortest of Options.Timeout, timeout_ms and the
//     tool's wall time). Cancelling the context drops the connection
//     (CodeCancelled).
//   - The secret goes into the Authorization header and nowhere else: not
//     into a message, a Details map, a log line (one line per call: tool,
//     host, status, size, code) nor the tool_call. A 2xx output that holds
//     it in any form secrets.Matcher finds (as sent, JSON-escaped, base64,
//     hex, URL-encoded, in a key or a value) fails the call with
//     CodeSecretInOutput and none of the output; an error body's excerpt
//     masks it as sent and is withheld when the body holds it otherwise;
//     and every failure's message and details are scrubbed last (a
//     Content-Type, a Location's host, a certificate's names come from the
//     tool too).
//
// # Failures
//
//   - CodeRefused, Setup false: the tool's URL, or its answer, is something
//     this runtime never follows: a forbidden address (literal or resolved),
//     a redirect, a runtime_config that does not check. It is the tool's
//     registration that points there, so it is the tool's failure; the
//     operator may still allow-list the host:port.
//   - CodeRefused, Setup true: the tool's secret_ref is not in this
//     server's store, or not granted to this tool for this host:port (the
//     operator's to fix).
//   - CodeSecretInOutput: the answer held the call's secret; nothing of it
//     is recorded.
//   - CodeUnreachable, Setup true: the name does not resolve, the connection
//     is refused or times out, the TLS handshake fails.
//   - CodeToolError: a non-2xx status (Details["status"], and a short
//     sanitised Details["body_excerpt"]), or a response that broke off.
//   - CodeBadOutput: a 2xx body that is not JSON. The Content-Type is not
//     judged; the body is.
//   - CodeOutputTooLarge, CodeWallTimeout (Details["timeout"] is
//     "response_headers" when the server took the request and never
//     answered), CodeCancelled.
//
// Connections are pooled: one http.Transport per Runtime, for
// all its tools. Resource caps other than the wall time describe the remote
// tool's machine and are not judged here.
package httppost
