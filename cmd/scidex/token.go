package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/scidex/substrate/internal/auth"
)

// tokenCmd prints a development token the server with the same configuration
// accepts: HS256 with SCIDEX_JWT_SECRET or the data dir's secret. With
// --delegation it mints a delegated token: the actor acts on behalf of the
// chain's actors, each in its session and on its task, as SPEC-001 §4.1 writes
// a delegation_chain.
func tokenCmd(args []string) error {
	f := newFlags("token")
	c := addCommon(f)
	sub := f.str("sub", "", "", "the actor id (required)")
	kind := f.str("kind", "", auth.KindHuman, "actor kind", oneOf(auth.KindHuman, auth.KindAILocal, auth.KindAIExternal, auth.KindAISwarm))
	perms := f.str("permissions", "", "contributor", "comma-separated: viewer, contributor, reviewer, admin")
	ttl := f.duration("ttl", "", time.Hour, "how long the token is valid", above(time.Duration(0)))
	session := f.str("session", "", "", "the session id the actor acts in")
	parent := f.str("parent-session", "", "", "the session that started this one; default: the session of the last --delegation step")
	task := f.str("task", "", "", "the task id the session works on")
	delegation := f.str("delegation", "", "", "on whose behalf the actor acts, outermost first: actor[/session[/task]],… or a JSON list of {actor_id, session_id, task_id}")
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
	chain, err := parseDelegation(*delegation)
	if err != nil {
		return &configError{problems: []string{fmt.Sprintf("--delegation=%s: %v", quote(*delegation), err)}}
	}
	if *parent == "" && len(chain) > 0 {
		*parent = chain[len(chain)-1].SessionID
	}
	secret, err := hsSecret(c, true)
	if err != nil {
		return err
	}
	tok, err := auth.Mint(auth.MintOpts{Secret: secret, Issuer: *c.issuer, Audience: *c.audience, Subject: *sub,
		Kind: *kind, Permissions: ps, TTL: *ttl, SessionID: *session, ParentSessionID: *parent, TaskID: *task,
		DelegationChain: chain, Now: time.Now()})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(os.Stdout, tok)
	return err
}

// parseDelegation reads --delegation: comma-separated steps, outermost first,
// each an actor id optionally followed by /session and /task
// ("human:ada/s-1,agent:orch/s-2/task-7"; "agent:orch//task-7" names a task
// without a session), or, for actor ids that hold a comma or a slash, the
// claim itself as a JSON list.
func parseDelegation(s string) (auth.DelegationChain, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	if strings.HasPrefix(s, "[") {
		return auth.ParseDelegationChain([]byte(s))
	}
	var chain auth.DelegationChain
	for i, step := range strings.Split(s, ",") {
		parts := strings.Split(strings.TrimSpace(step), "/")
		if len(parts) > 3 {
			return nil, fmt.Errorf("step %d has %d parts, want actor[/session[/task]]", i+1, len(parts))
		}
		parts = append(parts, "", "")
		if parts[0] == "" {
			return nil, fmt.Errorf("step %d has no actor, want actor[/session[/task]]", i+1)
		}
		chain = append(chain, auth.DelegationStep{ActorID: parts[0], SessionID: parts[1], TaskID: parts[2]})
	}
	return chain, nil
}
