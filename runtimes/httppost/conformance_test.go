package httppost

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/runtimetest"
)

func TestConformance(t *testing.T) {
	var mu sync.Mutex
	var started chan struct{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.Copy(w, r.Body)
	})
	mux.HandleFunc("POST /bad", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"value": "not a number"}`)
	})
	mux.HandleFunc("POST /sleep", func(w http.ResponseWriter, r *http.Request) {
		// The server notices a dropped connection (and ends the request's
		// context) only once the body is read.
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		if started != nil {
			close(started)
			started = nil
		}
		mu.Unlock()
		<-r.Context().Done()
	})
	mux.HandleFunc("POST /huge", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `"`+strings.Repeat("x", runtimes.MaxOutputBytes)+`"`)
	})
	s, hp := server(t, mux)
	rt := newRuntime(t, Options{Allow: []string{hp}})
	runtimetest.Run(t, runtimetest.Fixture{
		Runtime:   rt,
		Echo:      toolFor(s.URL+"/echo", ""),
		BadOutput: toolFor(s.URL+"/bad", ""),
		Sleep:     toolFor(s.URL+"/sleep", ""),
		Huge:      toolFor(s.URL+"/huge", ""),
		Started: func() <-chan struct{} {
			mu.Lock()
			defer mu.Unlock()
			started = make(chan struct{})
			return started
		},
	})
}
