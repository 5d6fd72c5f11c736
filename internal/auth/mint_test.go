package auth

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMintVerifyRoundTrip(t *testing.T) {
	clock := newFakeClock()
	v := hsVerifier(t, clock)
	opts := MintOpts{
		Secret:          testSecret,
		Subject:         "agent:swarm-7",
		Kind:            KindAISwarm,
		Permissions:     []Permission{PermReviewer},
		TTL:             time.Hour,
		SessionID:       "s2",
		ParentSessionID: "s1",
		TaskID:          "task-9",
		DelegationChain: DelegationChain{{ActorID: "human:carol", SessionID: "s0"}, {ActorID: "agent:lead", SessionID: "s1", TaskID: "task-8"}},
		Now:             clock.Now(),
	}
	token, err := Mint(opts)
	if err != nil {
		t.Fatalf("Mint: %v", err)
	}
	p, err := v.Verify(context.Background(), token)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	want := Principal{
		Actor:           Actor{ID: "agent:swarm-7", Kind: KindAISwarm, Permissions: []Permission{PermReviewer}},
		SessionID:       "s2",
		ParentSessionID: "s1",
		TaskID:          "task-9",
		DelegationChain: DelegationChain{{ActorID: "human:carol", SessionID: "s0"}, {ActorID: "agent:lead", SessionID: "s1", TaskID: "task-8"}},
		ExpiresAt:       clock.Now().Add(time.Hour),
	}
	if p.ID != want.ID || p.Kind != want.Kind || !slices.Equal(p.Permissions, want.Permissions) ||
		p.SessionID != want.SessionID || p.ParentSessionID != want.ParentSessionID || p.TaskID != want.TaskID ||
		!slices.Equal(p.DelegationChain, want.DelegationChain) || !p.ExpiresAt.Equal(want.ExpiresAt) {
		t.Errorf("principal = %+v, want %+v", *p, want)
	}

	// The token stops verifying once the TTL (and the leeway) has passed.
	clock.Advance(time.Hour + DefaultLeeway + time.Second)
	_, err = v.Verify(context.Background(), token)
	wantReason(t, err, "token expired", leakCandidates(token)...)

	// Custom issuer and audience round-trip too, and only to a matching verifier.
	opts.Issuer, opts.Audience, opts.Now = "lab", "lab-api", clock.Now()
	token, err = Mint(opts)
	if err != nil {
		t.Fatal(err)
	}
	lab, err := NewVerifier(VerifierOpts{HS256Secret: testSecret, Issuer: "lab", Audience: "lab-api", Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lab.Verify(context.Background(), token); err != nil {
		t.Errorf("custom iss/aud: %v", err)
	}
	_, err = v.Verify(context.Background(), token)
	wantReason(t, err, "token issuer not accepted")
}

func TestMintDefaultsToNow(t *testing.T) {
	token, err := Mint(MintOpts{Secret: testSecret, Subject: "a", Kind: KindHuman, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(VerifierOpts{HS256Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(context.Background(), token)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if d := time.Until(p.ExpiresAt); d <= 0 || d > time.Minute {
		t.Errorf("expires in %v, want within a minute", d)
	}
}

func TestMintRefusesBadOptions(t *testing.T) {
	good := MintOpts{Secret: testSecret, Subject: "a", Kind: KindHuman, TTL: time.Minute}
	tests := []struct {
		name   string
		mutate func(*MintOpts)
		want   string
	}{
		{"short secret", func(o *MintOpts) { o.Secret = []byte("short") }, "secret"},
		{"no subject", func(o *MintOpts) { o.Subject = "" }, "subject"},
		{"the server's own actor", func(o *MintOpts) { o.Subject = "system" }, "server's own actor"},
		{"bad kind", func(o *MintOpts) { o.Kind = "robot" }, "kind"},
		{"empty kind", func(o *MintOpts) { o.Kind = "" }, "kind"},
		{"unknown permission", func(o *MintOpts) { o.Permissions = []Permission{"root"} }, "unknown permission"},
		{"zero TTL", func(o *MintOpts) { o.TTL = 0 }, "TTL"},
		{"negative TTL", func(o *MintOpts) { o.TTL = -time.Hour }, "TTL"},
		{"empty delegate", func(o *MintOpts) { o.DelegationChain = DelegationChain{{ActorID: "human:carol"}, {SessionID: "s1"}} }, "delegation"},
		{"huge token", func(o *MintOpts) { o.Subject = strings.Repeat("x", MaxTokenBytes) }, "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := good
			tt.mutate(&o)
			token, err := Mint(o)
			if err == nil {
				t.Fatalf("Mint succeeded with %q", token)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
			if strings.Contains(err.Error(), string(testSecret)) {
				t.Errorf("error %q contains the secret", err)
			}
		})
	}
}
