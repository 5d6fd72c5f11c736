package skills

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/skills/chem"
	"github.com/scidex/substrate/skills/units"
)

// sarVersion is chem.sar_table's version (its tool's and its worker's).
const sarVersion = "1.1.0"

// sarExample is the golden series, abridged: the README tour runs it.
var sarExample = map[string]any{
	"activity_type": "IC50",
	"compounds": []any{
		map[string]any{"id": "anilino", "smiles": "c1ccc(Nc2ncnc3ccccc23)cc1", "activity": map[string]any{"value": 344, "unit": "nM"}},
		map[string]any{"id": "3'-Br", "smiles": "Brc1cccc(Nc2ncnc3ccccc23)c1", "activity": map[string]any{"value": 27, "unit": "nM"}},
		map[string]any{"id": "6,7-diOMe", "smiles": "COc1cc2ncnc(Nc3ccccc3)c2cc1OC", "activity": map[string]any{"value": 29, "unit": "nM"}},
		map[string]any{"id": "PD 153035", "smiles": "COc1cc2ncnc(Nc3cccc(Br)c3)c2cc1OC", "activity": map[string]any{"value": 0.025, "unit": "nM"}},
		map[string]any{"id": "6-NH2 3'-Br", "smiles": "Nc1ccc2ncnc(Nc3cccc(Br)c3)c2c1", "activity": map[string]any{"value": 0.78, "unit": "nM"}},
		map[string]any{"id": "7-NH2 3'-Br", "smiles": "Nc1ccc2c(Nc3cccc(Br)c3)ncnc2c1", "activity": map[string]any{"value": 0.1, "unit": "nM"}},
	},
}

// sarReferences are the references chem.sar_table's output names.
var sarReferences = []string{"rdkit_2022_09", "ligand_efficiency_2004", "lipinski_1997", "veber_2002", "egfr_quinazolines_1996"}

// sarInput reads and checks the arguments.
func sarInput(args json.RawMessage) (*chem.Input, []runtimes.Problem) {
	var a chem.Args
	if ps := decodeStrict(args, &a); ps != nil {
		return nil, ps
	}
	in, err := chem.Validate(a)
	if err != nil {
		return nil, refusalProblems(err, nil, args)
	}
	return in, nil
}

// sarTable is chem.sar_table: the SAR table of a series, from RDKit run in
// the sandbox, with its figure.
func sarTable(deps Deps) Skill {
	const name = "chem.sar_table"
	check := func(args json.RawMessage) []runtimes.Problem {
		_, ps := sarInput(args)
		return ps
	}
	run := func(ctx context.Context, args json.RawMessage, progress func(runtimes.Progress)) (json.RawMessage, error) {
		in, ps := sarInput(args)
		if len(ps) > 0 {
			return nil, refused(errors.New(ps[0].Path + ": " + ps[0].Message))
		}
		if deps.Sandbox == nil {
			return nil, runtimes.Errorf(runtimes.CodeRefused, false, "%v", chem.ErrNoSandbox)
		}
		if progress == nil {
			progress = func(runtimes.Progress) {}
		}
		order := chem.PotencyOrder(in)
		out, err := chem.RunWorker(ctx, deps.Sandbox, sarVersion, "sar-"+randomID(), chem.Request(in, order), progress)
		if err != nil {
			return nil, err
		}
		table, warnings := chem.Build(in, out)
		var figures []string
		fig, figURL := "", ""
		if in.Figure && deps.Store != nil {
			svg, drawn, fwarn := sarFigure(in, table, out, order)
			warnings = append(warnings, fwarn...)
			if drawn > 0 {
				ref, err := storeSARFigure(ctx, deps.Store, table, svg, drawn)
				if err != nil {
					return nil, err
				}
				fig, figURL = ref, "/artifacts/"+ref+"/figure.svg"
				figures = append(figures, ref)
			}
		}
		inchi := "none: this server's RDKit has no InChI and inchi_main (Debian libinchi-bin) is not installed"
		if out.InChISource != nil {
			inchi = *out.InChISource
		} else {
			warnings = append(warnings, "no InChI or InChIKey: "+inchi)
		}
		route := fmt.Sprintf("RDKit %s in the bwrap sandbox: canonical SMILES, Wildman–Crippen cLogP, Ertl TPSA, Lipinski donors/acceptors (OH+NH, N+O) and RDKit's HBD/HBA, rotatable bonds; InChI by %s; %s; pActivity = −log10(activity in mol/L); LE = 1.4·pActivity / heavy atoms; sorted by %s",
			out.RDKitVersion, inchi, coreRoute(table.Core), in.SortBy)
		res := map[string]any{
			"units":               map[string]string{"mw": "g/mol", "tpsa": "Å2", "pactivity": "1 (−log10 mol/L)", "ligand_efficiency": "kcal/mol per heavy atom", "activity.value": "activity.unit"},
			"check_logic_version": chem.LogicVersion, "calculation_route": route,
			"rdkit_version": out.RDKitVersion, "table": table,
			"warnings": nonNilStrings(warnings),
			"disclaimers": []string{"Computed properties of the structures as drawn (no tautomer or charge-state enumeration); rules of thumb, not predictions of a compound's fate",
				"Ligand efficiency uses the activity as if it were a binding free energy"},
			"references_used": sarReferencesUsed(),
			"figure":          fig, "figure_url": figURL, "figures": nonNilStrings(figures),
		}
		return json.Marshal(res)
	}
	return Skill{
		Name: name, Version: sarVersion, CheckLogicVersion: chem.LogicVersion, Intended: Designed, References: sarReferences,
		Run: run, Check: check,
		Tool: mustManifest(map[string]any{
			"name": name, "version": sarVersion, "runtime": "in_process", "runtime_config": map[string]any{"function": name},
			"summary":       "A medicinal chemist's first look at a series: per compound canonical SMILES, InChIKey, heavy atoms, MW, cLogP, TPSA, HBD/HBA, rotatable bonds, Lipinski and Veber flags, pActivity and ligand efficiency; an R-group decomposition against a given core or the series' maximum common substructure; the sorted SAR table and an SVG grid of the structures. RDKit runs in the bwrap sandbox as a queued job.",
			"input_schema":  sarInputSchema(),
			"output_schema": sarOutputSchema(),
			// Over the dispatcher's synchronous limit (2 min): every call is
			// a queued job, worked by a worker process, with progress events.
			"resource_caps": map[string]any{"wall_time_min": 3}, "deterministic": true, "idempotent": true,
			"render_hints": map[string]any{"primary_view": "table", "columns": []any{"id", "pactivity", "ligand_efficiency", "mw", "clogp", "tpsa"}},
			"examples":     []any{map[string]any{"description": "4-Anilinoquinazoline EGFR inhibitors of the PD 153035 series (Bridges et al. 1996), abridged.", "args": sarExample}},
		}),
		Doc: mustManifest(map[string]any{
			"title":       "SAR table of a compound series",
			"summary":     "Properties, ligand efficiency, R-groups and a structure grid for a series of compounds with activities, computed by RDKit in a sandbox.",
			"domain":      "medicinal chemistry",
			"inputs":      fmt.Sprintf("compounds [{id, smiles, activity {value, unit: nM, uM, µM, mM, pM, M or nmol/L...}, relation = < > <= >=}] (at most %d, SMILES at most %d bytes, %d heavy atoms); activity_type (IC50, EC50, Ki, Kd, GI50); core (SMILES or SMARTS; default the maximum common substructure); sort_by pactivity | ligand_efficiency | id; figure (default true, the %d most potent).", chem.MaxCompounds, chem.MaxSMILESBytes, chem.MaxHeavyAtoms, chem.MaxFigure),
			"outputs":     "table {rows [{rank, id, canonical_smiles, inchikey, formula, heavy_atoms, mw, clogp, tpsa, hbd, hba, rotatable_bonds, lipinski, veber, activity, pactivity, ligand_efficiency, rgroups}], core, rgroup_labels, unmatched}; figure and figure_url.",
			"limitations": "Structures as drawn: no tautomers, protonation states or stereo-aware decomposition; cLogP is Wildman–Crippen's, not the CLOGP Lipinski used; the MCS search stops at 20 s.",
			"disclaimers": []any{"Computed properties of the structures as drawn; rules of thumb, not predictions of a compound's fate"},
			"example":     map[string]any{"description": "Runs as written with runSkill.", "inputs": sarExample},
		}),
	}
}

func coreRoute(c chem.Core) string {
	switch {
	case c.Source == "given" && c.SMARTS != "":
		return "R-groups by RDKit's RGroupDecomposition against the given core"
	case c.Source == "mcs" && c.SMARTS != "":
		return fmt.Sprintf("R-groups by RDKit's RGroupDecomposition against the series' maximum common substructure (rdFMCS, complete rings, %d atoms)", c.Atoms)
	}
	return "no R-group decomposition (no core)"
}

func sarReferencesUsed() []map[string]any {
	refs, _ := References()
	out := []map[string]any{}
	for _, id := range sarReferences {
		r := refs[id]
		out = append(out, map[string]any{"id": id, "status": r.Status, "document": r.Title})
	}
	return out
}

// sarFigure draws the figure: the worker's drawings, each rebuilt by the
// sanitiser, in potency order, with legends the server writes.
func sarFigure(in *chem.Input, t *chem.Table, out *chem.WorkerOutput, order []int) (string, int, []string) {
	byIndex := map[int]chem.Row{}
	for _, r := range t.Rows {
		byIndex[r.Index] = r
	}
	var cells []chem.Cell
	var warnings []string
	for _, i := range order {
		if len(cells) == chem.MaxFigure {
			warnings = append(warnings, fmt.Sprintf("the figure shows the %d most potent of %d compounds", chem.MaxFigure, len(in.Compounds)))
			break
		}
		raw, ok := out.SVG[fmt.Sprint(i)]
		if !ok {
			continue
		}
		d, err := chem.SanitizeSVG(raw)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("compounds[%d] (%s): its drawing was refused (%v) and is left out of the figure", i, in.Compounds[i].ID, err))
			continue
		}
		cells = append(cells, chem.Cell{Drawing: d, Legend: chem.Legend(t, byIndex[i])})
	}
	title := fmt.Sprintf("SAR: %d compounds, %s, most potent first", len(cells), t.ActivityType)
	return chem.Grid(title, cells, 5), len(cells), warnings
}

func storeSARFigure(ctx context.Context, st *store.Store, t *chem.Table, svg string, n int) (string, error) {
	ids := make([]string, 0, len(t.Rows))
	rows := append([]chem.Row(nil), t.Rows...)
	sort.SliceStable(rows, func(a, b int) bool { return rows[a].Rank < rows[b].Rank })
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	content, _ := json.Marshal(map[string]any{
		"caption":     fmt.Sprintf("Structures of %d compounds of the series with their %s, p%s and ligand efficiency, most potent first.", n, t.ActivityType, t.ActivityType),
		"alt_text":    fmt.Sprintf("A grid of %d 2D chemical structures, each labelled with its compound id and its %s.", n, t.ActivityType),
		"figure_type": "structure_grid",
		"media_type":  "image/svg+xml",
		"svg":         svg,
		"spec_format": "svg",
		"spec":        map[string]any{"compounds": ids, "activity_type": t.ActivityType},
		"produced_by": map[string]any{"skill": "chem.sar_table", "tool": "chem.sar_table"},
	})
	res, err := st.CreateArtifact(ctx, store.CreateParams{Type: "figure", Title: fmt.Sprintf("chem.sar_table structures (%d)", n), Content: content})
	if err != nil {
		return "", fmt.Errorf("record the figure: %w", err)
	}
	return res.Ref, nil
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func sarInputSchema() js {
	unitsEnum := append([]string{"M", "mM", "uM", "µM", "μM", "nM", "pM"}, unitSymbols(units.MolarConcentration)...)
	activity := closed("The measured activity: a positive molar concentration.", js{
		"value": with(number("The number, in unit."), "exclusiveMinimum", 0),
		"unit":  oneOfStrings("A molar concentration: nM, uM (µM), mM, pM, M, or a UCUM unit (nmol/L...).", unitsEnum),
	}, "value", "unit")
	compound := closed("One compound.", js{
		"id":       with(str("The compound's id in the series (unique)."), "minLength", 1, "maxLength", chem.MaxIDBytes),
		"smiles":   with(str("Its structure as SMILES."), "minLength", 1, "maxLength", chem.MaxSMILESBytes),
		"activity": activity,
		"relation": oneOfStrings("How the activity relates to the true value (default =; > for inactive at the top concentration).", chem.Relations),
	}, "id", "smiles")
	return args("A series of compounds with their activities.", js{
		"compounds":     with(array("The series.", compound), "minItems", 1, "maxItems", chem.MaxCompounds),
		"activity_type": oneOfStrings("What the activities are (default IC50); pActivity is −log10 of it in mol/L.", chem.ActivityTypes),
		"core":          with(str("The core to decompose on, SMILES or SMARTS; default the series' maximum common substructure."), "maxLength", chem.MaxSMILESBytes),
		"sort_by":       oneOfStrings("The table's order (default pactivity, highest first).", chem.SortKeys),
		"figure":        boolean("Draw the structure grid (default true)."),
	}, []string{"compounds"}, sarExample)
}

func sarOutputSchema() js {
	nullStr := func(desc string) js { return js{"type": []string{"string", "null"}, "description": desc} }
	flags := func(desc string, extra js) js {
		return open(desc, merge(js{"violations": texts("Each limit broken."), "passes": boolean("Whether the compound passes.")}, extra), "violations", "passes")
	}
	activity := open("The activity given; null without one.", js{
		"value": number("As given."), "unit": str("As given."), "relation": oneOfStrings("As given (default =).", chem.Relations),
	}, "value", "unit", "relation")
	activity["type"] = []string{"object", "null"}
	row := open("One compound.", js{
		"rank": integer("Its place in the table."), "index": integer("Its index in compounds."), "id": str("Its id."),
		"input_smiles":     str("The SMILES given."),
		"canonical_smiles": str("RDKit's canonical SMILES."),
		"inchi":            nullStr("Standard InChI; null when none could be computed."),
		"inchikey":         nullStr("Standard InChIKey; null when none could be computed."),
		"formula":          str("Molecular formula."),
		"heavy_atoms":      integer("Heavy (non-hydrogen) atoms."), "mw": number("Average molecular weight (g/mol)."),
		"clogp": number("Wildman–Crippen logP."), "tpsa": number("Topological polar surface area (Å²), Ertl."),
		"hbd": integer("H-bond donors (RDKit's definition)."), "hba": integer("H-bond acceptors (RDKit's definition)."),
		"rotatable_bonds": integer("Rotatable bonds."),
		"lipinski": flags("Lipinski's rule of five (1997): MW ≤ 500, cLogP ≤ 5, OH+NH ≤ 5, N+O ≤ 10; passes with at most one violation.", js{
			"donors_oh_nh": integer("OH and NH groups (the paper's donors)."), "acceptors_n_o": integer("N and O atoms (the paper's acceptors)."),
		}),
		"veber":              flags("Veber's criteria (2002): rotatable bonds ≤ 10 and TPSA ≤ 140 Å².", js{}),
		"activity":           activity,
		"pactivity":          nullable("−log10 of the activity in mol/L; null without an activity."),
		"pactivity_relation": oneOfStrings("How pActivity relates to the true value (> 10 µM is pIC50 < 5).", chem.Relations),
		"ligand_efficiency":  nullable("1.4·pActivity / heavy atoms (kcal/mol per heavy atom); null without an activity."),
		"rgroups":            js{"type": "object", "description": "Core and R1..Rn as SMILES, for a compound that has the core.", "additionalProperties": js{"type": "string"}},
		"error":              str("Why RDKit could not read the structure (its properties are then absent)."),
	}, "rank", "index", "id", "input_smiles", "activity", "pactivity", "ligand_efficiency")
	core := open("The core the R-groups are relative to.", js{
		"source": str("given (the caller's), mcs (the series' maximum common substructure), or empty (none)."),
		"given":  str("The core given."), "smarts": str("The core as SMARTS."), "atoms": integer("Its atoms."),
		"timed_out": boolean("Whether the MCS search stopped at its time limit."),
	}, "source", "atoms", "timed_out")
	props := merge(common(chem.LogicVersion), js{
		"table": open("The SAR table.", js{
			"activity_type":  oneOfStrings("What the activities are.", chem.ActivityTypes),
			"pactivity_name": str("pActivity's name (pIC50...)."),
			"sorted_by":      oneOfStrings("The table's order.", chem.SortKeys),
			"rows":           array("The compounds, sorted.", row),
			"core":           core,
			"rgroup_labels":  texts("Core, R1..Rn."),
			"unmatched":      texts("Ids of the compounds without the core."),
		}, "activity_type", "pactivity_name", "sorted_by", "rows", "core", "rgroup_labels", "unmatched"),
		"rdkit_version": str("The RDKit that computed it."),
		"figure":        str("The figure artifact's ref (empty without one)."),
		"figure_url":    str("Where the figure's SVG is served (empty without one)."),
		"figures":       texts("The figure refs."),
	})
	return result("chem.sar_table's result.", props, resultRequired("table", "rdkit_version", "figures")...)
}
