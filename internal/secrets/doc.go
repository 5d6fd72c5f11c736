// Package secrets is the server's secret store: named credentials the
// operator gives the server (an API token for an HTTP tool, for one) so that
// no artifact, manifest or tool call ever has to carry them.
//
// A tool names a secret (runtime_config.secret_ref of an http_post tool); the
// runtime that needs it asks the store for the value when it makes the call
// and puts it on the wire, and nowhere else. The store is read once, at
// start, from two places: the environment, where SCIDEX_SECRET_<NAME>=value
// defines the secret NAME, and a secrets file (Options.File; suggested flag
// --secrets-file, variable SCIDEX_SECRETS_FILE).
//
// # Grants
//
// A secret is usable only as the operator grants it: per secret, the tool
// names that may send it and the host:port pairs they may send it to. A tool
// naming a secret without a grant for its name and its URL's host:port is
// refused when it is registered and again when it is called, so a
// contributor cannot register a tool that sends an operator's token to a
// server of their choosing, and a granted tool whose URL moves to another
// host:port loses the grant. Granted compares a URL's host:port as the HTTP
// client dials it (Target: the port 80 or 443 filled in, the host without
// case, an IP literal canonical, IPv6 in brackets; "units.example." is not
// "units.example").
//
// Grants are written in the secrets file's JSON form, and only there:
//
//	{
//	  "UNITS_TOKEN": {"value": "s3cr3t", "tools": ["http-units"], "hosts": ["127.0.0.1:8765"]},
//	  "FROM_ENV":    {"tools": ["pk.remote"], "hosts": ["pk.example:443"]},
//	  "NOT_YET":     "a value granted to nothing"
//	}
//
// An entry is an object of "value", "tools" and "hosts" (no other key):
// "tools" and "hosts" come together, each a non-empty list, and grant every
// tool listed for every host listed. An entry without "value" grants a
// secret of the environment (SCIDEX_SECRET_FROM_ENV above), which is how an
// environment secret gets a grant; an environment secret the file does not
// grant is granted to nothing. A string entry, a {"value"} entry and every
// NAME=value line define a secret granted to nothing: it is loaded, no tool
// may use it, and the server warns of it at start, by name (Ungranted).
// A malformed grant (an unknown key, a host without a port, a tool name the
// tool schema would refuse, a grant of a secret defined nowhere) stops the
// start with an error naming the entry, never the value. Grants, like
// values, are read once, at start.
//
// # The secrets file
//
// Its shape is told by its first non-blank byte. A file starting with "{"
// is one JSON object, each member a secret: a string (its value) or an
// entry as above.
//
// Any other file is lines of NAME=value:
//
//	# comments and blank lines are ignored
//	UNITS_TOKEN=s3cr3t
//	OTHER_API = the value runs to the end of the line
//
// In the line form the name and the value are trimmed of surrounding blanks
// and the value is taken as written: no quotes, no escapes (a value with
// surrounding blanks needs the JSON form).
//
// A name is upper-case letters, digits and underscores, starting with a
// letter (the environment variable's suffix, as written). A value is not
// empty and holds no control characters (it goes into an HTTP header).
//
// The file must be a regular file that its owner alone may write and that
// others may not read: any permission bit for "other" (o+r, o+w, o+x) or
// group write makes Load refuse it, as ssh refuses a readable private key.
// Group read is allowed (root:scidex 0640 is a usual deployment). The same
// name in the environment and in the file is an error rather than a silent
// precedence: an operator rotating a secret should not wonder which one won.
//
// Values never leave the package by accident: Lookup returns a Value, whose
// String, GoString, Format, MarshalJSON and LogValue print "[redacted]";
// only Reveal gives the bytes, at the one place that sends them. Every error
// Load returns names the secret or the line, never a value.
//
// # Finding a secret in an answer
//
// A tool server may echo its credential, escaped or encoded. Value.Matcher
// finds the value in what a tool answered, as sent and in the usual
// encodings (base64, hex, URL encoding), in the raw bytes and in what they
// decode to (every JSON string and key, percent-decoded text), so that the
// runtime refuses to record such an answer (match.go).
package secrets
