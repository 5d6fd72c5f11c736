package auth

import "errors"

// ErrUnauthenticated is wrapped by every error Verify returns, so callers can
// test for a failed authentication with errors.Is.
var ErrUnauthenticated = errors.New("unauthenticated")

// VerifyError is the error Verify returns. Reason is short, fixed text that is
// safe to send to the client ("token expired", "token signature invalid", …);
// the cause, available through Cause and errors.Is/As, explains the failure in
// more detail for the server's logs. Neither contains the token, a secret or
// key material.
type VerifyError struct {
	Reason string
	cause  error
}

// Error returns "unauthenticated: " followed by the safe reason; the cause is
// deliberately left out so the message can be shown to anyone.
func (e *VerifyError) Error() string { return "unauthenticated: " + e.Reason }

// Unwrap exposes both ErrUnauthenticated and the cause to errors.Is and
// errors.As.
func (e *VerifyError) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrUnauthenticated}
	}
	return []error{ErrUnauthenticated, e.cause}
}

// Cause returns the underlying error for logging, or nil when the reason says
// everything.
func (e *VerifyError) Cause() error { return e.cause }

// Reason returns the client-safe reason carried by err if it is (or wraps) a
// *VerifyError, and "unauthenticated" otherwise.
func Reason(err error) string {
	var ve *VerifyError
	if errors.As(err, &ve) {
		return ve.Reason
	}
	return "unauthenticated"
}

// verifyErr builds a *VerifyError.
func verifyErr(reason string, cause error) *VerifyError {
	return &VerifyError{Reason: reason, cause: cause}
}

// The client-safe reasons Verify reports. They are fixed strings so they can
// never carry attacker-controlled or secret data.
const (
	reasonMissing         = "token missing"
	reasonTooLarge        = "token too large"
	reasonMalformed       = "token malformed"
	reasonAlgNone         = "algorithm none not allowed"
	reasonAlgUnsupported  = "token algorithm not supported"
	reasonAlgRefused      = "token algorithm not accepted"
	reasonCritical        = "token has unsupported critical header"
	reasonNoKeyID         = "token has no key id"
	reasonBadKeyID        = "token key id invalid"
	reasonUnknownKeyID    = "token key id unknown"
	reasonKeyAlgMismatch  = "token algorithm does not match key"
	reasonKeysUnavailable = "token keys unavailable"
	reasonSignature       = "token signature invalid"
	reasonExpired         = "token expired"
	reasonNoExp           = "token has no exp claim"
	reasonNotYetValid     = "token not valid yet"
	reasonIssuedInFuture  = "token issued in the future"
	reasonIssuer          = "token issuer not accepted"
	reasonNoIssuer        = "token has no iss claim"
	reasonAudience        = "token audience not accepted"
	reasonNoAudience      = "token has no aud claim"
	reasonNoSubject       = "token has no sub claim"
	reasonSubject         = "token sub claim reserved"
	reasonNoKind          = "token has no actor_kind claim"
	reasonKind            = "token actor_kind not accepted"
	reasonPermission      = "token has unknown permission"
	reasonDelegation      = "token delegation chain invalid"
	reasonInvalid         = "token invalid"
)
