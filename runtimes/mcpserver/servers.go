package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// ServersFile is the shape of the operator's MCP servers file:
//
//	{"servers": {
//	  "textkit": {"command": ["/usr/local/bin/mcp-textkit"], "env": {"TEXTKIT_MAX_WORDS": "50"}},
//	  "remote":  {"url": "https://mcp.example.org/mcp", "headers": {"X-Team": "chem"}}
//	}}
//
// Unknown fields are refused, so a misspelt "comand" is an error rather than
// a server silently missing its program.
type ServersFile struct {
	Servers map[string]Server `json:"servers"`
}

// LoadServers reads an MCP servers file (the path given by --mcp-servers or
// SCIDEX_MCP_SERVERS) and checks every entry. Its errors name the file and
// the bad entry; they never repeat an env or header value.
func LoadServers(path string) (map[string]Server, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: read servers file: %w", err)
	}
	servers, err := ParseServers(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return servers, nil
}

// ParseServers decodes and checks the content of an MCP servers file.
func ParseServers(b []byte) (map[string]Server, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f ServersFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf(`mcpserver: the servers file is {"servers": {"<name>": {"command": [...], "env": {...}} | {"url": "...", "headers": {...}}}}: %w`, err)
	}
	if err := dec.Decode(new(json.RawMessage)); !errors.Is(err, io.EOF) {
		return nil, errors.New("mcpserver: the servers file holds more than one JSON value")
	}
	if f.Servers == nil {
		return nil, errors.New(`mcpserver: the servers file has no "servers" object`)
	}
	var errs []error
	for _, name := range sortedNames(f.Servers) {
		if err := validateServer(name, f.Servers[name]); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return f.Servers, nil
}
