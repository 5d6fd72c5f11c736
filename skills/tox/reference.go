package tox

// The skill's name, logic version and the guidance it follows. The lead's
// references file mirrors these; the output quotes them so a reader knows
// what the numbers were checked against.
const (
	// SkillName is the skill's name as a tool and a skill artifact.
	SkillName = "tox.fih_dose_projection"
	// LogicVersion changes whenever a formula, a constant, a default or a
	// refusal rule changes, so a recorded call says which logic produced it.
	LogicVersion = "1.1.0"

	// GuidanceID is the guidance's id in the references file (skills/references.json).
	GuidanceID = "fda_2005_mrsd"
	// GuidanceDocument names the guidance.
	GuidanceDocument = "FDA CDER Guidance for Industry: Estimating the Maximum Safe Starting Dose in Initial Clinical Trials for Therapeutics in Adult Healthy Volunteers"
	// GuidanceVersion is the guidance's issue date, which serves as its version.
	GuidanceVersion = "July 2005"
	// GuidanceURL is where FDA publishes the guidance. The document could not
	// be retrieved when this package was written, so the URL and the
	// document's sha256 are unverified (GuidanceStatus).
	GuidanceURL = "https://www.fda.gov/media/72309/download"
	// GuidanceStatus is the status of the guidance document itself, carried
	// from the data README: to_verify until someone retrieves and hashes it.
	// The Table 1 rows carry their own statuses.
	GuidanceStatus = StatusToVerify

	// TableID is fda2005_table1.csv's id in the references file.
	TableID = "fda_2005_table1"
)

// The fixed phrases every result carries, word for word (issue 10, §6 of
// the architecture): the number is an aid to a decision a qualified person
// makes, and the pharmacologically active dose and minimal anticipated
// biological effect level approaches were not applied.
const (
	PhraseDecision    = "Projection for your decision, not a starting dose"
	PhraseNotComputed = "PAD/MABEL not computed"
	// PhraseCheckedAgainst is "checked against <document> <version>".
	PhraseCheckedAgainst = "checked against " + GuidanceDocument + " " + GuidanceVersion
)

// Guidance constants not in Table 1's columns. Sources: the data README
// (secondary sources for the guidance's text); see doc.go.
const (
	// DefaultSafetyFactor is the guidance's default: MRSD = HED / 10.
	DefaultSafetyFactor = 10.0
	// BodyWeightExponent is b in HED = NOAEL × (W_animal / W_human)^b, the
	// guidance's formula for species or weights outside Table 1.
	BodyWeightExponent = 0.33
)

// Reference describes a document or data file an output relies on.
type Reference struct {
	ID       string `json:"id"`
	Document string `json:"document"`
	Version  string `json:"version"`
	URL      string `json:"url,omitempty"`
	SHA256   string `json:"sha256,omitempty"`
	Status   string `json:"status"`
}

// References lists what every result of this package relies on: the guidance
// (to_verify: not retrieved) and the embedded Table 1 file (its hash is the
// one computed here; its rows carry their own statuses, and each result
// reports the statuses of the rows it used).
func References() []Reference {
	return []Reference{
		{ID: GuidanceID, Document: GuidanceDocument, Version: GuidanceVersion, URL: GuidanceURL, Status: GuidanceStatus},
		{ID: TableID, Document: GuidanceDocument + ", Table 1 (fda2005_table1.csv)", Version: GuidanceVersion, SHA256: TableSHA256, Status: tableFileStatus()},
	}
}

// tableFileStatus is verified only when every row this package can use is:
// the animal rows and human_adult. The human_child_20kg row (to_verify) is
// never read by this skill, so it does not hold the skill back.
func tableFileStatus() string {
	for _, sp := range append(defaultTable.animalSpecies(), HumanAdult) {
		if r, _ := defaultTable.row(sp); r.Status != StatusVerified {
			return StatusToVerify
		}
	}
	return StatusVerified
}
