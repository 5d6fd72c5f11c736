DROP TABLE IF EXISTS trusted_documents;
