package market

import (
	_ "embed"
	"encoding/json"
)

//go:embed trade.json
var tradeTool []byte

//go:embed quote.json
var quoteTool []byte

// TradeTool and QuoteTool are the manifests.
func TradeTool() json.RawMessage { return tradeTool }

// QuoteTool is market.quote's manifest.
func QuoteTool() json.RawMessage { return quoteTool }
