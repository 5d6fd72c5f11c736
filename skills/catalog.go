package skills

import (
	"encoding/json"
	"fmt"

	"github.com/scidex/substrate/runtimes/inprocess"
)

// Skill is one procedure of the catalog.
type Skill struct {
	// Name is the skill's name, also its tool's name and in_process function
	// (pk.nca).
	Name    string
	Version string
	// CheckLogicVersion names the version of the calculation and checking
	// logic; every call records it.
	CheckLogicVersion string
	// Intended is the status the skill is meant to be served at (designed,
	// preview, available); the references gate may keep it designed.
	Intended string
	// References are the ids in references.json the skill depends on.
	References []string
	// Tool is the skill's tool manifest (runtime in_process, function Name).
	Tool json.RawMessage
	// Doc is the skill artifact's content, without the fields Install fills
	// in (references, statuses, check_logic_version, tool_name).
	Doc json.RawMessage
	// Run is the function, with the store it writes figures through bound.
	Run inprocess.Func
	// Check refuses bad arguments before the call is recorded (units,
	// vocabularies, the procedure's own validation), naming each field.
	Check inprocess.ArgsCheck
}

// Catalog is this build's skills; deps gives the ones that write artifacts
// (figures) what they need. The list is the one place a skill is added.
func Catalog(deps Deps) []Skill {
	return catalog(deps)
}

// Funcs are the catalog's in_process functions, by name, for the in_process
// runtime's registry.
func Funcs(deps Deps) map[string]inprocess.Func {
	out := map[string]inprocess.Func{}
	for _, s := range Catalog(deps) {
		out[s.Name] = s.Run
	}
	return out
}

// Checks are the catalog's argument checks, by function name
// (inprocess.Runtime.WithChecks).
func Checks(deps Deps) map[string]inprocess.ArgsCheck {
	out := map[string]inprocess.ArgsCheck{}
	for _, s := range Catalog(deps) {
		if s.Check != nil {
			out[s.Name] = s.Check
		}
	}
	return out
}

func mustManifest(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("skills: encode a manifest: %v", err))
	}
	return b
}
