package model

import "time"

// Event is one entry of the event log; Actor and Artifact resolve lazily.
type Event struct {
	ID            string
	Cursor        string
	Type          string
	OccurredAt    time.Time
	Source        string
	ActorID       string
	ActorKind     string
	Ref           *string
	Payload       JSON
	SchemaVersion int
}

// ToolCallEvent is an event of a tool call; ToolCall resolves lazily.
type ToolCallEvent struct {
	Event   *Event
	Type    string
	Payload JSON
}

// MessageDelivery is one recipient's delivery of a message.
type MessageDelivery struct {
	RecipientID string
	Status      AckStatus
	AckedAt     *time.Time
	Response    *string
	ArchivedAt  *time.Time
}
