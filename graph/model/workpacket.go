package model

// AgentWorkPacket (a typed artifact model written by cmd/typegen) is the
// success member of the work packet mutations' result unions.

// IsClaimWorkPacketResult marks AgentWorkPacket as a member of ClaimWorkPacketResult.
func (AgentWorkPacket) IsClaimWorkPacketResult() {}

// IsReportWorkPacketProgressResult marks AgentWorkPacket as a member of ReportWorkPacketProgressResult.
func (AgentWorkPacket) IsReportWorkPacketProgressResult() {}

// IsCompleteWorkPacketResult marks AgentWorkPacket as a member of CompleteWorkPacketResult.
func (AgentWorkPacket) IsCompleteWorkPacketResult() {}
