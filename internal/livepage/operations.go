package livepage

// Operations are the GraphQL documents the page sends, by the name its
// script knows them by. The page gets them in its HTML (the script reads
// them from there), so a production server can register exactly these as
// trusted documents (Documents).
var operations = map[string]string{
	"head": `query LivePageHead { poll(from: NOW, limit: 1) { cursor } }`,
	"read": `query LivePage($ref: Ref!) { artifact(ref: $ref) {
  ref type title content revision updatedAt updatedBy { id } lifecycleState
  links(direction: BOTH, first: 50) { edges { node { predicate from { ref title } to { ref title } } } }
  signals { kinds { kind dimension aggregation value count unit } }
} }`,
	"follow":  `subscription LivePageFollow($ref: Ref!, $since: Cursor) { artifactEvents(ref: $ref, since: $since) { id cursor type ref } }`,
	"catchUp": `query LivePageCatchUp($since: Cursor, $filter: JSON) { poll(since: $since, filter: $filter, limit: 100) { events { id cursor type ref } cursor hasMore } }`,
}

// Documents are the page's operations, by name: what a production server
// registers as trusted so that the page works there for every reader.
func Documents() map[string]string {
	out := make(map[string]string, len(operations))
	for name, doc := range operations {
		out["live page "+name] = doc
	}
	return out
}
