package workpacket

import (
	"context"
	"encoding/json"

	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes/skillcall"
)

// Writer is the skill_call runtime's view of the store: the packet a call
// writes is a server write of the caller's invokeTool, and the read finds
// the packet an earlier attempt of the call wrote. The runtime gets nothing
// else of the store (runtimes/* never import it).
func Writer(st *store.Store) skillcall.Packets { return writer{st} }

type writer struct{ st *store.Store }

func (w writer) CreatePacket(ctx context.Context, id, title string, content json.RawMessage) (string, error) {
	res, err := w.st.ServerCreate(ctx, "invokeTool", store.CreateParams{Type: PacketType, ID: id, Title: title, Content: content})
	if err != nil {
		return "", err
	}
	return res.Artifact.Unpinned().String(), nil
}

func (w writer) Packet(ctx context.Context, id string) (string, json.RawMessage, error) {
	a, err := w.st.Get(ctx, ref.Ref{Type: PacketType, ID: id})
	if err != nil {
		return "", nil, err
	}
	return a.Unpinned().String(), a.Content, nil
}
