package resolvers

import (
	"strings"

	"github.com/scidex/substrate/graph/model"
	"github.com/scidex/substrate/internal/alias"
	"github.com/scidex/substrate/internal/store"
)

func handleModel(h *store.Handle) *model.Handle {
	m := &model.Handle{Name: h.Name, Registered: h.Registered, State: model.HandleState(strings.ToUpper(h.State)), H: h}
	if h.Kind == alias.KindRole {
		m.Role = &h.Role
	} else {
		m.ActorID = h.Actor
	}
	if h.State == alias.StateTombstone {
		m.RenamedTo, m.RenamedAt = &h.Current, h.RenamedAt
	}
	if h.Registered {
		m.ClaimedAt = &h.ClaimedAt
	}
	return m
}
