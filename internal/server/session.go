package server

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/session"
)

// sessionAnswer is what the /auth/session endpoints answer: who the session
// is, until when, and the CSRF token its pages echo on writes.
type sessionAnswer struct {
	Actor struct {
		ID          string   `json:"id"`
		Kind        string   `json:"kind"`
		Permissions []string `json:"permissions"`
	} `json:"actor"`
	ExpiresAt time.Time `json:"expiresAt"`
	CSRFToken string    `json:"csrfToken"`
}

func answerSession(w http.ResponseWriter, status int, a auth.Actor, expires time.Time, csrf string) {
	var out sessionAnswer
	out.Actor.ID, out.Actor.Kind = a.ID, a.Kind
	out.Actor.Permissions = []string{}
	for _, p := range a.Permissions {
		out.Actor.Permissions = append(out.Actor.Permissions, string(p))
	}
	out.ExpiresAt, out.CSRFToken = expires.UTC(), csrf
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(out)
}

// createSession is POST /auth/session: a page exchanges a bearer token
// (the Authorization header, or {"token": "…"} as JSON) for the scidex_jwt
// cookie, which expires with the token. Only this server's pages and listed
// origins may log a browser in (else a foreign page could log its visitor in
// as someone else).
func (s *Server) createSession(w http.ResponseWriter, r *http.Request) {
	rid := request.NewID()
	w.Header().Set("X-Request-Id", rid)
	if refusal := session.Check(r, s.origins); refusal == session.CrossSite {
		writeError(w, http.StatusForbidden, problem.Unauthenticated, rid, "a session is only created from this server's own pages or an origin listed in --allowed-origins")
		return
	}
	token, cookie := auth.TokenSource(r)
	if cookie {
		token = "" // the cookie is what is being made; it cannot vouch for itself
	}
	if token == "" && r.Body != nil {
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/json" {
			var body struct {
				Token string `json:"token"`
			}
			raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
			if err != nil || json.Unmarshal(raw, &body) != nil {
				writeError(w, http.StatusBadRequest, problem.ValidationFailed, rid, `the body is not JSON of the form {"token": "<jwt>"} (at most 64 KiB)`)
				return
			}
			token = body.Token
		}
	}
	if token == "" {
		writeError(w, http.StatusBadRequest, problem.ValidationFailed, rid,
			`no token: send it as Authorization: Bearer <jwt>, or as the JSON body {"token": "<jwt>"} (mint one with `+"`scidex token`"+`)`)
		return
	}
	p, err := s.tokens.verify(r.Context(), s.opts.Verifier, token, s.opts.Now())
	if err != nil {
		s.log.Info("session refused", "request_id", rid, "reason", auth.Reason(err), "cause", causeOf(err))
		writeError(w, http.StatusUnauthorized, problem.Unauthenticated, rid, "unauthenticated: "+auth.Reason(err))
		return
	}
	csrf := s.cookies.Issue(w, r, token, p.ExpiresAt)
	s.log.Info("session created", "request_id", rid, "actor", p.Actor.ID, "expires_in_s", strconv.Itoa(int(p.ExpiresAt.Sub(s.opts.Now()).Seconds())))
	answerSession(w, http.StatusOK, p.Actor, p.ExpiresAt, csrf)
}

// readSession is GET /auth/session: who the cookie (or token) is, and the
// session's CSRF token, for a page loaded after the login.
func (s *Server) readSession(w http.ResponseWriter, r *http.Request) {
	rc := request.From(r.Context())
	if rc.Anonymous {
		writeError(w, http.StatusUnauthorized, problem.Unauthenticated, rc.RequestID, "no session: POST /auth/session with a token first")
		return
	}
	answerSession(w, http.StatusOK, rc.Actor, rc.ExpiresAt, session.CSRF(r))
}

// deleteSession is DELETE /auth/session: the cookies are cleared. A
// browser's logout is a write like any other, so it needs the CSRF token
// (a foreign page cannot log its visitor out); the token need not verify
// any more (an expired session can still be left).
func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	rid := request.NewID()
	w.Header().Set("X-Request-Id", rid)
	if _, cookie := auth.TokenSource(r); cookie {
		if refusal := session.Check(r, s.origins); refusal != "" {
			writeError(w, http.StatusForbidden, problem.Unauthenticated, rid, string(refusal))
			return
		}
	}
	s.cookies.Clear(w, r)
	w.WriteHeader(http.StatusNoContent)
}
