package httppost

import (
	"bytes"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// excerptBytes is how much of an error body a caller is shown.
const excerptBytes = 200

// excerpt reads the start of an error body and makes it safe to show: at
// most excerptBytes of it, the call's secret masked wherever it appears as
// sent (a server that echoes the request's headers must not hand the secret
// to the caller), invalid UTF-8 and control characters replaced, blanks
// collapsed. When the body holds the secret in any other form the matcher
// finds (escaped, base64, hex, URL-encoded), nothing of it is shown: ex is
// "" and withheld is true. It reads excerptBytes plus the matcher's reach,
// so that a secret straddling the cut is seen whole, not shown in part.
func excerpt(body io.Reader, sec *callSecret) (ex string, withheld bool, err error) {
	reach := 0
	if sec != nil {
		reach = sec.match.Reach()
	}
	raw, err := io.ReadAll(io.LimitReader(body, int64(excerptBytes+reach)))
	mask := make([]bool, len(raw))
	if sec != nil {
		secret := []byte(sec.value)
		for i := 0; i < len(raw); {
			j := bytes.Index(raw[i:], secret)
			if j < 0 {
				break
			}
			for k := i + j; k < i+j+len(secret); k++ {
				mask[k] = true
			}
			i += j + 1
		}
	}
	n := min(len(raw), excerptBytes)
	var b strings.Builder
	space := false
	for i := 0; i < n; {
		if mask[i] {
			b.WriteString("[redacted]")
			for i < len(raw) && mask[i] {
				i++
			}
			space = false
			continue
		}
		r, size := utf8.DecodeRune(raw[i:])
		i += size
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError {
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		b.WriteRune(r)
		space = false
	}
	s := strings.TrimSpace(b.String())
	if len(raw) > excerptBytes && s != "" {
		s += "…"
	}
	if sec != nil {
		// What is left once the secret as sent is masked (a NUL, which no
		// secret holds, in its place) must not hold it in another form.
		rest := bytes.Clone(raw)
		for i := range rest {
			if mask[i] {
				rest[i] = 0
			}
		}
		if sec.match.FoundIn(rest) || sec.match.FoundIn([]byte(s)) {
			return "", true, err
		}
	}
	return s, false, err
}

// safeText reports whether s is printable text.
func safeText(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return utf8.ValidString(s)
}
