package schema

// SignalSlot is one figure a type's signal summary reports: a declared kind
// and one of its dimensions ("default" for a kind without dimensions).
type SignalSlot struct {
	Kind, Dimension string
	Rule            SignalRule
	// Unit is the rule's unit, nil when it has none.
	Unit *string
}

// SignalSlots are the type's signal slots, kinds in name order and each
// kind's dimensions in declared order: what every artifact's summary lists.
// They are computed once per type; callers must not change them.
func (t *Type) SignalSlots() []SignalSlot {
	t.slotsOnce.Do(func() {
		for _, kind := range t.Doc.SignalKinds() {
			rule := t.Doc.Signals[kind]
			var unit *string
			if rule.Unit != "" {
				u := rule.Unit
				unit = &u
			}
			dims := rule.Dimensions
			if len(dims) == 0 {
				dims = []string{"default"}
			}
			for _, dim := range dims {
				t.slots = append(t.slots, SignalSlot{Kind: kind, Dimension: dim, Rule: rule, Unit: unit})
			}
		}
	})
	return t.slots
}
