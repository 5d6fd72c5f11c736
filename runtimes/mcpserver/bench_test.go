package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/mcpserver"
)

// BenchmarkEcho measures a trivial call on a warm shared session, one call
// at a time and from parallel callers.
func BenchmarkEcho(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	h := newHTTPServer(b)
	rt, err := mcpserver.New(mcpserver.Options{Servers: map[string]mcpserver.Server{
		"stdio": {Command: []string{exe, "-test.run=^$"}, Env: map[string]string{serverEnv: "stdio", "GORACE": "atexit_sleep_ms=0"}},
		"http":  {URL: h.URL},
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	for _, server := range []string{"stdio", "http"} {
		call := &runtimes.Call{Tool: tool(server, "echo"), Args: json.RawMessage(`{"value":1}`)}
		if _, err := rt.Run(context.Background(), call); err != nil {
			b.Fatal(err)
		}
		b.Run(server+"/serial", func(b *testing.B) {
			for b.Loop() {
				if _, err := rt.Run(context.Background(), call); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(server+"/parallel", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := rt.Run(context.Background(), call); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
