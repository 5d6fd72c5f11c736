DROP VIEW IF EXISTS artifact_briefs;
