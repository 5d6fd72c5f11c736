package skills

// catalog lists the skills of this build. (Each skill's wrapper, in this
// package, turns a tool call's JSON arguments into its procedure's typed
// inputs through the units layer, and its result back.)
func catalog(deps Deps) []Skill {
	return []Skill{nca(deps), fih(), readiness(), conformance(deps), sarTable(deps)}
}
