// Package livepage serves the artifact page a person opens in a browser,
// /artifacts/<ref>: the artifact (title, content, links, signal summary),
// followed live over EventSource with the session cookie (SPEC-001 §13.10's
// pattern, no framework). The page is static; its script does the rest:
//
//   - it logs in with a token pasted into the page (POST /auth/session)
//     unless the browser already holds the session cookie;
//   - it takes the log's head cursor, reads the artifact, and follows
//     artifactEvents(ref, since: that cursor) over Server-Sent Events, so
//     nothing between the read and the stream is missed; every event re-reads
//     the artifact (an edit by anyone appears without a refresh);
//   - when the stream drops, the browser reconnects by itself, sending the
//     last event's id (Last-Event-ID), and the server resumes right after
//     it; on a long disconnection, or a stream the server refuses, the page
//     polls from its cursor meanwhile; when the stream is back, polling stops
//     and events already seen are recognised by id, so none is applied twice.
//
// window.scidexLive holds the page's state (the events applied and what
// brought each, duplicates recognised, the stream's repeats of its own, the
// mode), which the end-to-end test reads.
//
// Everything the artifact holds is set as text, never as markup: a title or
// content written by a hostile contributor cannot run in the reader's page,
// and the page's policy allows scripts from this server only.
package livepage

import (
	"bytes"
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"strings"

	"github.com/scidex/substrate/internal/ref"
)

//go:embed assets
var assets embed.FS

// policy is the pages' Content-Security-Policy: this server's script, style
// and API, nothing else.
const policy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
	"form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

// Mount serves the page at /artifacts/{ref} and its assets under
// /assets/live/.
func Mount(mux *http.ServeMux) {
	sub, _ := fs.Sub(assets, "assets")
	files := http.StripPrefix("/assets/live/", http.FileServerFS(sub))
	mux.Handle("GET /assets/live/", secured(files))
	html, _ := fs.ReadFile(assets, "assets/page.html")
	ops, _ := json.Marshal(operations) // escapes <, > and &: inert inside the script element
	page := bytes.Replace(html, []byte("{{operations}}"), ops, 1)
	mux.Handle("GET /artifacts/{ref}", secured(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := ref.Parse(r.PathValue("ref")); err != nil {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte("no such page: the path names no artifact (/artifacts/<type>:<id>): " + strings.ReplaceAll(err.Error(), "\n", " ") + "\n"))
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(page)
	})))
}

func secured(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", policy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}
