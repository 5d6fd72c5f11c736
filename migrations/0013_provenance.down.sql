DROP TABLE IF EXISTS provenance_edges;
