-- name: ProvenanceStamp :many
-- Stamps the edges of one submission on an artifact, skipping those already
-- there, and says of each whether its target exists (a tool or skill of that
-- name is registered; actors are checked by the caller) and whether it was
-- written now. One statement for the whole submission.
WITH cand AS (
    -- Two unnests in one select list pair up element by element.
    SELECT unnest(@predicates::text[]) AS predicate, unnest(@targets::text[]) AS target
), known AS (
    SELECT cand.predicate, cand.target FROM cand
    WHERE cand.predicate = 'produced_by_actor'
       OR (cand.predicate = 'produced_by_tool' AND EXISTS (
            SELECT 1 FROM artifacts t WHERE t.type = 'tool' AND t.id = substr(cand.target, 6)))
       OR (cand.predicate = 'produced_by_skill' AND EXISTS (
            SELECT 1 FROM artifacts s WHERE s.type = 'skill' AND s.content @> jsonb_build_object('name', substr(cand.target, 7))))
), ins AS (
    INSERT INTO provenance_edges (source_pk, predicate, target, version, request_id, stamped_by, created_at)
    SELECT @source_pk::bigint, known.predicate, known.target, @version::integer, @request_id::text, @stamped_by::text, @created_at::timestamptz
    FROM known
    ON CONFLICT ON CONSTRAINT provenance_edges_edge_key DO NOTHING
    RETURNING provenance_edges.predicate, provenance_edges.target
)
SELECT cand.predicate::text AS predicate, cand.target::text AS target,
       EXISTS (SELECT 1 FROM known k WHERE k.predicate = cand.predicate AND k.target = cand.target) AS known,
       EXISTS (SELECT 1 FROM ins i WHERE i.predicate = cand.predicate AND i.target = cand.target) AS inserted
FROM cand;

-- name: ProvenanceSourceOf :one
-- The artifact a stamp outside a write names, if the stamping actor wrote it
-- (created it, or wrote its current version): a tool's output cannot attribute
-- someone else's artifact to its caller.
SELECT pk, version FROM artifacts
WHERE type = @type::text AND id = @id::text AND (created_by = @actor::text OR updated_by = @actor::text);

-- name: ProvenanceStampsFor :many
-- Every stamp on each of many artifacts, oldest first.
SELECT * FROM provenance_edges WHERE source_pk = ANY (@pks::bigint[]) ORDER BY source_pk, pk;

-- name: ProvenanceProduced :many
-- A page of what an actor produced, newest first: each artifact with its
-- first tool and skill stamps, optionally only those via one of via_targets,
-- and only artifacts the viewer may read (see privateSQL).
SELECT p.pk AS stamp_pk, p.created_at AS produced_at, coalesce(tool.target, '')::text AS tool_target,
       coalesce(skill.target, '')::text AS skill_target, sqlc.embed(a)
FROM provenance_edges p
JOIN artifacts a ON a.pk = p.source_pk
LEFT JOIN LATERAL (
    SELECT x.target FROM provenance_edges x WHERE x.source_pk = p.source_pk AND x.predicate = 'produced_by_tool' ORDER BY x.pk LIMIT 1
) AS tool ON true
LEFT JOIN LATERAL (
    SELECT x.target FROM provenance_edges x WHERE x.source_pk = p.source_pk AND x.predicate = 'produced_by_skill' ORDER BY x.pk LIMIT 1
) AS skill ON true
WHERE p.predicate = 'produced_by_actor' AND p.target = @actor_target::text
  AND p.pk < @before_pk::bigint
  AND (cardinality(@via_targets::text[]) = 0 OR EXISTS (
        SELECT 1 FROM provenance_edges v
        WHERE v.source_pk = p.source_pk AND v.predicate IN ('produced_by_tool', 'produced_by_skill') AND v.target = ANY (@via_targets::text[])))
  AND (@admin::boolean OR a.visibility = 'public' OR a.created_by = @viewer::text OR @viewer::text = ANY (a.participants)
       OR EXISTS (SELECT 1 FROM message_deliveries md WHERE md.message_pk = a.pk AND md.recipient = @viewer::text))
ORDER BY p.pk DESC
LIMIT @lim::integer;
