package debate

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/inprocess"
)

var (
	//go:embed start.json
	startTool []byte
	//go:embed argue.json
	argueTool []byte
	//go:embed replay.json
	replayTool []byte
	//go:embed turn.json
	turnTool []byte
)

// Verb is one tool of the debate (tools.Verb's fields): Run is nil for
// debate.turn, a skill_call tool whose calls are work packets.
type Verb struct {
	Name  string
	Tool  json.RawMessage
	Run   inprocess.Func
	Check inprocess.ArgsCheck
}

// Verbs is the debate's tools, writing through st.
func Verbs(st *store.Store) []Verb {
	return []Verb{
		{Name: StartFunc, Tool: startTool, Run: run(st, (*engine).start), Check: checkStart},
		{Name: ArgueFunc, Tool: argueTool, Run: run(st, (*engine).argue), Check: checkArgue},
		{Name: ReplayFunc, Tool: replayTool, Run: run(st, (*engine).replay)},
		{Name: TurnTool, Tool: turnTool},
	}
}

func run(st *store.Store, f func(*engine, context.Context, json.RawMessage) (any, error)) inprocess.Func {
	return func(ctx context.Context, args json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
		e, err := engineFor(st)
		if err != nil {
			return nil, err
		}
		out, err := f(e, ctx, args)
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
}

var personaPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)

type startArgs struct {
	Topic    string   `json:"topic"`
	Personas []string `json:"personas"`
	K        int      `json:"k"`
	About    string   `json:"about"`
}

// checkStart refuses what the input schema cannot say: a blank topic, and
// the synthesizer among the speakers (it closes the debate).
func checkStart(args json.RawMessage) []runtimes.Problem {
	var in startArgs
	if json.Unmarshal(args, &in) != nil {
		return nil // the schema refused it
	}
	var ps []runtimes.Problem
	if strings.TrimSpace(in.Topic) == "" {
		ps = append(ps, runtimes.Problem{Path: "topic", Constraint: "required", Message: "a debate needs a topic that is not blank"})
	}
	for i, p := range in.Personas {
		if p == Synthesizer {
			ps = append(ps, runtimes.Problem{Path: fmt.Sprintf("personas.%d", i), Constraint: "reserved",
				Message: "synthesizer is the persona of the closing synthesis, which every debate has: name only the speakers"})
		}
	}
	return ps
}

type argueArgs struct {
	Packet       string   `json:"packet"`
	Argument     *string  `json:"argument"`
	Citations    []string `json:"citations"`
	Synthesis    *string  `json:"synthesis"`
	Verdict      string   `json:"verdict"`
	NewQuestions []string `json:"new_questions"`
}

// checkArgue bounds every field before the call is recorded: an oversized
// argument, too many citations, a blank one.
func checkArgue(args json.RawMessage) []runtimes.Problem {
	var in argueArgs
	if json.Unmarshal(args, &in) != nil {
		return nil
	}
	var ps []runtimes.Problem
	text := func(path string, s *string, max int) {
		if s == nil {
			return
		}
		if strings.TrimSpace(*s) == "" {
			ps = append(ps, runtimes.Problem{Path: path, Constraint: "required", Message: path + " is blank"})
		} else if n := utf8.RuneCountInString(*s); n > max {
			ps = append(ps, runtimes.Problem{Path: path, Constraint: "maxLength", Message: fmt.Sprintf("%s is %d characters, over the %d allowed", path, n, max)})
		}
	}
	list := func(path string, xs []string, maxItems, maxLen int) {
		if len(xs) > maxItems {
			ps = append(ps, runtimes.Problem{Path: path, Constraint: "maxItems", Message: fmt.Sprintf("%s has %d items, over the %d allowed", path, len(xs), maxItems)})
			return
		}
		for i := range xs {
			text(fmt.Sprintf("%s.%d", path, i), &xs[i], maxLen)
		}
	}
	text("argument", in.Argument, MaxArgument)
	text("synthesis", in.Synthesis, MaxSynthesis)
	list("citations", in.Citations, MaxCitations, MaxCitation)
	list("new_questions", in.NewQuestions, MaxQuestions, MaxQuestion)
	return ps
}
