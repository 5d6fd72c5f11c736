// Package pgembed manages the private PostgreSQL cluster behind the SciDEX
// substrate's "embedded default".
//
// When `scidex serve` runs without DATABASE_URL, the server still needs a
// real PostgreSQL database. Rather than asking every user to install,
// configure and secure a server first, the binary keeps its own cluster
// under its data directory and drives the machine's local PostgreSQL server
// binaries (initdb, postgres) itself: it creates the cluster on the first
// run, starts it on every run, stops it on exit and reuses it afterwards.
//
// The cluster is private by construction. TCP is switched off
// (listen_addresses=”), the only way in is a Unix socket in a 0700
// directory owned by the cluster's OS user, and local connections use trust
// authentication, so no password exists to leak. When the process runs as
// root, the server runs as an unprivileged OS user instead, because
// PostgreSQL refuses to run as root.
//
// Exactly one process owns a cluster at a time: Start takes an exclusive
// flock on a lock file in the cluster directory and holds it until Stop.
// The kernel releases the lock when the owner dies, and a later Start
// adopts a server the dead owner left running instead of failing.
//
// Layout of the cluster directory:
//
//	<Dir>/scidex.lock        owner lock (flock), holds the owner's pid
//	<Dir>/data/              PGDATA
//	<Dir>/run/               Unix socket directory (0700)
//	<Dir>/log/postgres.log   server log (rotated to .1 past 16 MiB at start)
//
// The socket path <Dir>/run/.s.PGSQL.5432 must fit the 107-byte Unix socket
// limit; Start rejects deeper directories with an error naming the path
// rather than moving the socket elsewhere.
//
// Migrations are not this package's job; it only hands out a connection
// string (ConnString) once the server is ready and the database exists.
package pgembed
