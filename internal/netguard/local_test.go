package netguard

import (
	"net/netip"
	"testing"
)

// isLocal knows this machine's own addresses from its interfaces (loopback
// at least), which the guard refuses even when they are public.
func TestIsLocal(t *testing.T) {
	if !isLocal(netip.MustParseAddr("127.0.0.1")) || !isLocal(netip.MustParseAddr("::ffff:127.0.0.1")) {
		t.Error("127.0.0.1 is not counted as this machine's")
	}
	if isLocal(netip.MustParseAddr("93.184.216.34")) {
		t.Error("a remote public address is counted as this machine's")
	}
	e := &errGuard{addr: netip.MustParseAddr("203.0.113.9"), local: true}
	if got := (&Guard{who: "the test"}).refusal("203.0.113.9", "80", e).Msg; got != "203.0.113.9 is an address of this machine; the test does not connect to it unless the operator allow-lists 203.0.113.9:80" {
		t.Errorf("refusal %q", got)
	}
}
