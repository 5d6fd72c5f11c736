package main

import (
	"fmt"
	"os"
	"time"

	"github.com/scidex/substrate/internal/auth"
)

// tokenCmd prints a development token the server with the same configuration
// accepts: HS256 with SCIDEX_JWT_SECRET or the data dir's secret.
func tokenCmd(args []string) error {
	f := newFlags("token")
	c := addCommon(f)
	sub := f.str("sub", "", "", "the actor id (required)")
	kind := f.str("kind", "", auth.KindHuman, "actor kind", oneOf(auth.KindHuman, auth.KindAILocal, auth.KindAIExternal, auth.KindAISwarm))
	perms := f.str("permissions", "", "contributor", "comma-separated: viewer, contributor, reviewer, admin")
	ttl := f.duration("ttl", "", time.Hour, "how long the token is valid", above(time.Duration(0)))
	session := f.str("session", "", "", "session id to carry")
	if err := f.Parse(args); err != nil {
		return err
	}
	if *sub == "" {
		return &configError{problems: []string{"--sub is required: the actor id the token speaks for"}}
	}
	ps, err := auth.ParsePermissions(*perms)
	if err != nil {
		return &configError{problems: []string{fmt.Sprintf("--permissions=%s: %v", quote(*perms), err)}}
	}
	secret, err := hsSecret(c, true)
	if err != nil {
		return err
	}
	tok, err := auth.Mint(auth.MintOpts{Secret: secret, Issuer: *c.issuer, Audience: *c.audience, Subject: *sub,
		Kind: *kind, Permissions: ps, TTL: *ttl, SessionID: *session, Now: time.Now()})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(os.Stdout, tok)
	return err
}
