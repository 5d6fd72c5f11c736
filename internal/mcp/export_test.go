package mcp

// Watching is how many resource subscriptions s holds to the artifact ref.
func Watching(s *Server, ref string) int { return s.watch.count(ref) }
