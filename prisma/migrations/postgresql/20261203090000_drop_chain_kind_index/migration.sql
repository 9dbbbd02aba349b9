-- Issue 17 (ingest cost): chain_records' (kind, seq) index is dropped. Nothing the server runs
-- reads records by kind (the queries that filter on it name an operation and say `kind || ''`,
-- so that no planner picks this index), and every stage record added an entry to it: four per
-- receipt, ~8 µs of PostgreSQL (docs/BENCHMARKS.md, "… one index fewer …", session 18).
DROP INDEX "chain_records_kind_seq_idx";
