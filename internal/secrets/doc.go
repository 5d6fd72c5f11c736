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
// # The secrets file
//
// Its shape is told by its first non-blank byte. A file starting with "{"
// is one JSON object of strings:
//
//	{"UNITS_TOKEN": "s3cr3t", "OTHER_API": "…"}
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
package secrets
