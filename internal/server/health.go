package server

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// healthz answers as long as the process serves HTTP.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
}

// readyz answers 200 once the database is reachable and migrated, 503 otherwise.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if s.opts.ReadyFunc != nil {
		if err := s.opts.ReadyFunc(ctx); err != nil {
			s.log.Warn("not ready", "err", err)
			w.WriteHeader(http.StatusServiceUnavailable)
			_ = json.NewEncoder(w).Encode(map[string]string{"status": "unavailable", "reason": "database not ready"})
			return
		}
	}
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "ready"})
}
