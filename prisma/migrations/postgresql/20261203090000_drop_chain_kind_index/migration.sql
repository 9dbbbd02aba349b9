-- Issue 17 (ingest cost): chain_records' (kind, seq) index is dropped. Nothing the server runs
-- reads records by kind (the queries that filter on it name an operation and say `kind || ''`,
-- so that no planner picks this index), and every stage record added an entry to it: four per
-- receipt (docs/BENCHMARKS.md, "Fewer index entries a receipt").
DROP INDEX "chain_records_kind_seq_idx";
