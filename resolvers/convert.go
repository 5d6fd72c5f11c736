package resolvers

import (
	"encoding/json"

	"github.com/scidex/substrate/graph/model"
	"github.com/scidex/substrate/internal/store"
)

func writeSuccess(res *store.WriteResult) *model.WriteSuccess {
	return &model.WriteSuccess{Ref: res.Ref, ContentHash: res.ContentHash, Artifact: model.NewArtifact(res.Artifact),
		RequestID: res.RequestID, Warnings: nonNil(res.Warnings), IdempotentReplay: res.Replay}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// raw returns nil for an absent JSON argument, so "not given" differs from null.
func raw(j model.JSON) json.RawMessage {
	if j == nil {
		return nil
	}
	return json.RawMessage(j)
}
