package store

import (
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/scidex/substrate/internal/problem"
)

// MaxPatchOps bounds an RFC 6902 patch.
const MaxPatchOps = 1000

// applyPatch applies RFC 6902 operations to content. A malformed patch or one
// that does not apply is a validation problem naming the operation.
func applyPatch(content, patch json.RawMessage) (json.RawMessage, error) {
	var ops []json.RawMessage
	if err := json.Unmarshal(patch, &ops); err != nil {
		return nil, problem.Invalid(problem.Field("patch", "type", "a patch is a JSON array of RFC 6902 operations", patch))
	}
	if len(ops) > MaxPatchOps {
		return nil, problem.Invalid(problem.Field("patch", "maxItems", fmt.Sprintf("a patch has at most %d operations", MaxPatchOps), nil))
	}
	whole, err := jsonpatch.DecodePatch(patch)
	if err == nil {
		for i, op := range whole {
			if err := validOp(op); err != nil {
				return nil, problem.Invalid(problem.Field(fmt.Sprintf("patch[%d]", i), "rfc6902", err.Error(), ops[i]))
			}
		}
		opts := jsonpatch.NewApplyOptions()
		opts.AccumulatedCopySizeLimit = 1 << 20
		if out, err := whole.ApplyWithOptions(content, opts); err == nil {
			return out, nil
		}
	}
	// Something is wrong: apply one operation at a time to name the one that fails.
	doc := content
	for i, raw := range ops {
		p, err := jsonpatch.DecodePatch([]byte("[" + string(raw) + "]"))
		if err == nil {
			err = validOp(p[0])
		}
		if err != nil {
			return nil, problem.Invalid(problem.Field(fmt.Sprintf("patch[%d]", i), "rfc6902", err.Error(), raw))
		}
		opts := jsonpatch.NewApplyOptions()
		opts.AccumulatedCopySizeLimit = 1 << 20
		out, err := p.ApplyWithOptions(doc, opts)
		if err != nil {
			return nil, problem.Invalid(problem.Field(fmt.Sprintf("patch[%d]", i), "rfc6902", "does not apply: "+err.Error(), raw))
		}
		doc = out
	}
	return doc, nil
}

func validOp(op jsonpatch.Operation) error {
	kind := op.Kind()
	switch kind {
	case "add", "remove", "replace", "move", "copy", "test":
	default:
		return fmt.Errorf("op must be one of add, remove, replace, move, copy, test; got %q", kind)
	}
	if _, err := op.Path(); err != nil {
		return fmt.Errorf("path: %w", err)
	}
	return nil
}
