package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Dataset sizes (docs/targets.md P1 asks for ≥ 20k artifacts, 200k links, 200k signals).
const (
	hubs         = 10000 // hypothesis:hub-1 … hypothesis:hub-10000, each with exactly linksPerHub links out
	linksPerHub  = 20
	artifactsAll = 20000 // hubs included
)

// seedSQL writes the dataset in a few set-based statements, deterministic
// (setseed) so that every run measures the same data. It runs after the server
// has migrated the database and seeded the schema registry. Every artifact gets
// its version row; the search_docs trigger on artifacts runs as on any write.
// Content hashes are sha256 over the jsonb text of {title, content,
// lifecycle_state}, not RFC 8785 (nothing on the read path recomputes them).
const seedSQL = `
SELECT setseed(0.42);

INSERT INTO actors (id, kind, permissions, handle, first_seen_at, last_seen_at)
SELECT id, kind, perms, handle, now() - interval '400 days', now() FROM (VALUES
    ('seed-curator', 'ai_local', '{contributor}'::text[], NULL),
    ('ada', 'human', '{contributor,reviewer}', 'ada'),
    ('grace', 'human', '{contributor}', 'grace')) AS a (id, kind, perms, handle)
UNION ALL
SELECT 'voter-' || lpad(g::text, 2, '0'), CASE WHEN g % 5 = 0 THEN 'ai_external' ELSE 'human' END, '{contributor}', NULL,
       now() - interval '300 days', now()
FROM generate_series(1, 50) g
ON CONFLICT (id) DO NOTHING;

CREATE TEMP TABLE seed_voters AS
SELECT row_number() OVER (ORDER BY id) AS n, id, kind FROM actors WHERE id LIKE 'voter-%';

-- What to write: 10,000 hub hypotheses, more hypotheses, papers (PMID ids),
-- knowledge gaps and experiments; n numbers the artifacts of each type.
CREATE TEMP TABLE seed_spec AS
SELECT 'hypothesis'::text AS type, 'hub-' || g AS id, g AS n FROM generate_series(1, 10000) g
UNION ALL SELECT 'hypothesis', md5('hypothesis' || g)::uuid::text, 10000 + g FROM generate_series(1, 2000) g
UNION ALL SELECT 'paper', 'PMID:' || (31000000 + g), g FROM generate_series(1, 5000) g
UNION ALL SELECT 'knowledge_gap', md5('gap' || g)::uuid::text, g FROM generate_series(1, 1500) g
UNION ALL SELECT 'experiment', md5('experiment' || g)::uuid::text, g FROM generate_series(1, 1500) g;

WITH words AS (
    SELECT s.type, s.id, s.n,
        (ARRAY['TREM2','APOE','LRRK2','SNCA','MAPT','APP','PSEN1','GBA','C9orf72','SOD1','TARDBP','CD33'])[1 + s.n % 12] AS gene,
        (ARRAY['Alzheimer''s disease','Parkinson''s disease','ALS','frontotemporal dementia','Lewy body dementia','Huntington''s disease'])[1 + s.n % 6] AS disease,
        (ARRAY['microglial phagocytosis','lysosomal acidification','synaptic pruning','mitochondrial quality control','tau propagation','lipid metabolism','autophagic flux'])[1 + s.n % 7] AS process,
        (ARRAY['ada','grace','seed-curator'])[1 + s.n % 3] AS author,
        now() - interval '1 minute' * (s.n * 7 % 500000) AS at
    FROM seed_spec s
), rows AS (
    SELECT type, id, author, at,
        CASE type
            WHEN 'hypothesis' THEN format('%s variants impair %s in %s (H%s)', gene, process, disease, n)
            WHEN 'paper' THEN format('%s and %s: a cohort study of %s', gene, process, disease)
            WHEN 'knowledge_gap' THEN format('How does %s shape %s in %s? (G%s)', gene, process, disease, n)
            ELSE format('Does %s knockdown change %s in a %s model? (E%s)', gene, process, disease, n)
        END AS title,
        CASE type
            WHEN 'hypothesis' THEN jsonb_build_object('target_gene', gene, 'disease', disease, 'hypothesis_type', 'mechanistic',
                'mechanism', format('Loss of %s function lowers %s, which drives %s pathology.', gene, process, disease),
                'confidence', round((0.2 + random() * 0.7)::numeric, 2),
                'evidence_for', jsonb_build_array(jsonb_build_object('claim', format('%s carriers show reduced %s', gene, process), 'pmid', (31000000 + n % 5000 + 1)::text, 'strength', 'moderate')))
            WHEN 'paper' THEN jsonb_build_object('title', format('%s and %s: a cohort study of %s', gene, process, disease),
                'pmid', (31000000 + n)::text, 'journal', (ARRAY['Nature Neuroscience','Neuron','Brain','Acta Neuropathologica'])[1 + n % 4],
                'year', 2010 + n % 16, 'authors', jsonb_build_array('Smith J', 'Chen L', 'Garcia M'),
                'abstract', format('We studied %s in %s patients and found altered %s.', gene, disease, process))
            WHEN 'knowledge_gap' THEN jsonb_build_object('description', format('It is unknown whether %s acts through %s in %s.', gene, process, disease),
                'domain', 'neurodegeneration', 'disease', disease, 'genes', jsonb_build_array(gene))
            ELSE jsonb_build_object('aim', format('Test whether %s knockdown changes %s.', gene, process),
                'model_system', 'iPSC-derived microglia', 'species', 'Homo sapiens', 'sample_size', 12 + n % 36,
                'estimated_cost_usd', 5000 + n % 20 * 1000, 'primary_outcome', process)
        END AS content,
        CASE type WHEN 'hypothesis' THEN 'proposed' WHEN 'knowledge_gap' THEN 'open' WHEN 'experiment' THEN 'proposed' END AS lifecycle_state
    FROM words
), ins AS (
    INSERT INTO artifacts (type, id, version, title, content, content_hash, lifecycle_state, schema_version, created_at, updated_at, created_by, updated_by)
    SELECT type, id, 1, title, content,
        'sha256:' || encode(sha256(convert_to(jsonb_build_object('title', title, 'content', content, 'lifecycle_state', lifecycle_state)::text, 'UTF8')), 'hex'),
        lifecycle_state, 1, at, at, author, author
    FROM rows ORDER BY type, id
    RETURNING *
)
INSERT INTO artifact_versions (artifact_pk, version, content_hash, title, content, lifecycle_state, schema_version, created_at, created_by, journal_id)
SELECT pk, version, content_hash, title, content, lifecycle_state, schema_version, created_at, created_by, 0 FROM ins;

-- The seeded artifacts numbered 1..N, for random picks.
CREATE TEMP TABLE seed_pool AS
SELECT row_number() OVER (ORDER BY a.pk) AS i, a.pk, a.type, a.id FROM artifacts a JOIN seed_spec USING (type, id);
CREATE INDEX ON seed_pool (i);
ANALYZE seed_pool;

-- Links and signals reference seeded rows by construction: skip the
-- foreign-key triggers (no user trigger is on links or signals).
` + skipFKChecks + `

-- Exactly 20 links out of each hub, to distinct random other artifacts, with the
-- predicate the hypothesis schema declares for the target's type; links of a hub
-- get increasing pks in the order they were picked.
INSERT INTO links (from_pk, predicate, to_pk, evidence, created_by, created_at, metadata)
SELECT h.pk,
    CASE p.type WHEN 'paper' THEN 'cites' WHEN 'knowledge_gap' THEN 'addresses' WHEN 'experiment' THEN 'tested_by' ELSE 'related_to' END,
    p.pk, '{}', (ARRAY['ada','grace','seed-curator'])[1 + pick.k % 3], now() - interval '1 second' * h.i, '{}'
FROM seed_pool h
CROSS JOIN LATERAL (
    SELECT c.i, min(c.k) AS k
    FROM (SELECT 1 + floor(random() * 20000)::bigint AS i, k FROM generate_series(1, 28) k WHERE h.i > 0) c
    WHERE c.i <> h.i
    GROUP BY c.i ORDER BY min(c.k) LIMIT 20
) pick
JOIN seed_pool p ON p.i = pick.i
WHERE h.type = 'hypothesis' AND h.id LIKE 'hub-%'
ORDER BY h.pk, pick.k;

-- Signals. Votes ±1 (mostly up) from 50 voters, then re-votes of some of them;
-- ranks 0..1 on the dimensions each type declares; funding in USD on the types
-- that declare it; a few forecasts (calibration).
CREATE TEMP TABLE seed_dims (type text PRIMARY KEY, dims text[]);
INSERT INTO seed_dims
SELECT type, ARRAY(SELECT jsonb_array_elements_text(document->'signals'->'rank'->'dimensions'))
FROM (SELECT DISTINCT ON (type) type, document FROM schemas ORDER BY type, version DESC) s;

INSERT INTO signals (artifact_pk, kind, dimension, voter, voter_kind, value, weight, created_at)
SELECT p.pk, 'vote', 'default', v.id, v.kind, CASE WHEN random() < 0.72 THEN 1 ELSE -1 END, 1, now() - interval '1 second' * (300000 - r.g)
FROM (SELECT g, 1 + floor(random() * 20000)::bigint AS i, 1 + floor(random() * 50)::bigint AS vi FROM generate_series(1, 100000) g) r
JOIN seed_pool p ON p.i = r.i JOIN seed_voters v ON v.n = r.vi
ORDER BY r.g;

INSERT INTO signals (artifact_pk, kind, dimension, voter, voter_kind, value, weight, created_at)
SELECT artifact_pk, 'vote', 'default', voter, voter_kind, CASE WHEN random() < 0.6 THEN -value ELSE value END, 1, now() - interval '1 second' * (100000 - pk % 100000)
FROM signals WHERE kind = 'vote' AND random() < 0.15 ORDER BY pk;

INSERT INTO signals (artifact_pk, kind, dimension, voter, voter_kind, value, weight, created_at)
SELECT p.pk, 'rank', d.dims[1 + floor(random() * cardinality(d.dims))::int], v.id, v.kind, round(random()::numeric, 2)::float8, 1, now() - interval '1 second' * (200000 - r.g)
FROM (SELECT g, 1 + floor(random() * 20000)::bigint AS i, 1 + floor(random() * 50)::bigint AS vi FROM generate_series(1, 80000) g) r
JOIN seed_pool p ON p.i = r.i JOIN seed_voters v ON v.n = r.vi JOIN seed_dims d ON d.type = p.type
ORDER BY r.g;

INSERT INTO signals (artifact_pk, kind, dimension, voter, voter_kind, value, weight, unit, created_at)
SELECT p.pk, 'fund', 'default', v.id, v.kind, round(10 + 4990 * random() ^ 3), 1, 'USD', now() - interval '1 second' * (50000 - r.g)
FROM (SELECT g, 1 + floor(random() * 20000)::bigint AS i, 1 + floor(random() * 50)::bigint AS vi FROM generate_series(1, 16000) g) r
JOIN seed_pool p ON p.i = r.i JOIN seed_voters v ON v.n = r.vi
WHERE p.type <> 'paper'
ORDER BY r.g;

INSERT INTO signals (artifact_pk, kind, dimension, voter, voter_kind, value, weight, created_at)
SELECT p.pk, 'calibration', 'default', v.id, v.kind, round(random()::numeric, 2)::float8, 1, now() - interval '1 second' * (20000 - r.g)
FROM (SELECT g, 1 + floor(random() * 20000)::bigint AS i, 1 + floor(random() * 50)::bigint AS vi FROM generate_series(1, 8000) g) r
JOIN seed_pool p ON p.i = r.i JOIN seed_voters v ON v.n = r.vi
WHERE p.type <> 'knowledge_gap'
ORDER BY r.g;
`

const skipFKChecks = "SET LOCAL session_replication_role = replica;"

// seed writes the dataset, checks its shape and analyzes the tables.
func seed(ctx context.Context, connString string) error {
	t0 := time.Now()
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	script := seedSQL
	var userTriggers int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal
	    AND tgrelid IN ('links'::regclass, 'signals'::regclass)`).Scan(&userTriggers); err != nil {
		return err
	}
	if userTriggers > 0 { // they must fire: keep the foreign-key checks too
		script = strings.Replace(script, skipFKChecks, "", 1)
	}
	for _, stmt := range strings.SplitAfter(script, ";\n\n") {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			_ = tx.Rollback(ctx)
			return fmt.Errorf("seed: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		return err
	}
	var nArt, nVer, nLinks, nHubs, nBad, nSig int
	// Only what the seed wrote: the server installs artifacts of its own at
	// start (the skills, their tools, the links between them).
	err = conn.QueryRow(ctx, `WITH seeded AS (SELECT pk FROM artifacts WHERE type IN ('hypothesis', 'paper', 'knowledge_gap', 'experiment')),
	    seeded_links AS (SELECT l.from_pk FROM links l JOIN seeded s ON s.pk = l.from_pk)
	  SELECT
	    (SELECT count(*) FROM seeded),
	    (SELECT count(*) FROM artifact_versions v JOIN seeded s ON s.pk = v.artifact_pk),
	    (SELECT count(*) FROM seeded_links),
	    (SELECT count(DISTINCT from_pk) FROM seeded_links),
	    (SELECT count(*) FROM (SELECT from_pk FROM seeded_links GROUP BY from_pk HAVING count(*) <> $1) x),
	    (SELECT count(*) FROM signals)`, linksPerHub).Scan(&nArt, &nVer, &nLinks, &nHubs, &nBad, &nSig)
	if err != nil {
		return err
	}
	fmt.Printf("  dataset: %d artifacts (%d version rows), %d links out of %d hubs, %d signals; seeded in %s\n",
		nArt, nVer, nLinks, nHubs, nSig, time.Since(t0).Round(100*time.Millisecond))
	if nArt < artifactsAll || nVer != nArt || nLinks != hubs*linksPerHub || nHubs != hubs || nBad != 0 || nSig < 200000 {
		return fmt.Errorf("seeded dataset has the wrong shape")
	}
	return nil
}
