// Package graphiql serves GraphiQL, the in-browser GraphQL IDE that analysts
// use at /graphiql, from the substrate binary itself.
//
// # Why this package exists
//
// The usual way to serve GraphiQL is one HTML page that loads React and
// GraphiQL from a CDN. The substrate must not do that: it runs on machines with
// no internet access, and a page that pulls code from a third party at run
// time can be changed under us. So every byte the page needs — the UMD builds
// of react@18, react-dom@18, graphiql@3 and graphql-ws@5, plus a small script
// and style sheet of our own — is embedded in the binary with go:embed and
// served by [Handler]. The browser never contacts another origin, and the page
// carries a strict Content-Security-Policy that would block it if it tried.
//
// The page adds a token bar above GraphiQL: an API token (a JWT, for example
// from `scidex token`) pasted there is kept in the browser's localStorage and
// sent as "Authorization: Bearer <token>" on every HTTP request, and as
// {"Authorization": "Bearer <token>"} in the connection_init payload of the
// websocket used for subscriptions (graphql-transport-ws). GraphiQL's own
// Headers editor stays enabled and an Authorization header typed there wins
// over the token bar.
//
// # Mounting
//
// The handler serves the page at "/" and its assets under "/assets/", relative
// to where it is mounted, and the page refers to its assets with relative
// URLs. Mount it under a prefix with [http.StripPrefix], or let [Mount] do it:
//
//	graphiql.Mount(mux, "/graphiql", graphiql.Options{Endpoint: "/graphql"})
//
// which is the same as
//
//	h := http.StripPrefix("/graphiql", graphiql.Handler(graphiql.Options{Endpoint: "/graphql"}))
//	mux.Handle("/graphiql", h)  // answers with a redirect to "graphiql/"
//	mux.Handle("/graphiql/", h) // the page and its assets
//
// Then GET /graphiql redirects to /graphiql/ (a relative redirect, so it also
// works behind a proxy that adds a path prefix), /graphiql/ is the page, and
// /graphiql/assets/<hash>/<file> are the assets.
//
// # Updating the assets
//
// The files in assets/ are vendored, not written here: scripts/vendor-graphiql
// fetches the pinned npm versions, checks their integrity and rewrites assets/
// and assets/VERSIONS. Edit the pins in that script, run it, and run the tests
// of this package (which check VERSIONS against the embedded files and drive
// the page in headless Chromium). Our own code is in web/.
package graphiql
