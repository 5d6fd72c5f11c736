package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
)

// figureSVG serves a figure artifact's SVG at a stable URL,
// /artifacts/<ref>/figure.svg, so a person can look at what a skill drew: a
// pinned ref names one version forever (cached as immutable), an unpinned
// one the current version. The SVG is served with a policy that lets it draw
// and nothing else (no scripts, no fetches), whoever wrote it. Reading
// follows the API's rules: a token (or the session cookie), or anonymous
// reads where the operator allows them, and the artifact's visibility.
func (s *Server) figureSVG(w http.ResponseWriter, r *http.Request) {
	rc := request.From(r.Context())
	rid := rc.RequestID
	if rc.Anonymous && !s.opts.AnonymousRead {
		writeError(w, http.StatusUnauthorized, problem.Unauthenticated, rid, "unauthenticated: a token or the scidex_jwt session cookie is needed to read a figure")
		return
	}
	rf, err := ref.Parse(r.PathValue("ref"))
	if err != nil {
		writeError(w, http.StatusBadRequest, problem.ValidationFailed, rid, "the path names no artifact: "+err.Error())
		return
	}
	a, err := s.opts.Store.Get(r.Context(), rf)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, problem.NotFound, rid, "no artifact "+rf.String())
		return
	}
	if err != nil {
		s.log.Error("figure: read", "request_id", rid, "ref", rf.String(), "err", err)
		writeError(w, http.StatusInternalServerError, problem.InternalError, rid, "could not read the figure")
		return
	}
	var fig struct {
		SVG string `json:"svg"`
	}
	_ = json.Unmarshal(a.Content, &fig)
	if a.Type != "figure" || fig.SVG == "" {
		writeError(w, http.StatusNotFound, problem.NotFound, rid, rf.String()+" is not a figure with an SVG drawing")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "image/svg+xml; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("ETag", `"`+a.ContentHash+`"`)
	if rf.IsPinned() {
		h.Set("Cache-Control", "private, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "private, no-cache")
	}
	if r.Header.Get("If-None-Match") == `"`+a.ContentHash+`"` {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	_, _ = w.Write([]byte(fig.SVG))
}
