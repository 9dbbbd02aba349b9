-- Free-text search (written by hand: the schema language cannot express a virtual table).
-- One row per operation, rowid = operations.created_seq; `head` holds the identifying fields
-- (tool, target, effect, agent, trajectory, ids: ranked higher), `body` the rest (reasons,
-- params, evidence, side effects), both as "label: value" lines built by lib/domain/search.ts.
-- Kept by writeProjection in the projection's transaction; recreated by `projections:rebuild`,
-- which is also how a database that existed before this migration gets its rows (docs/API.md).
-- The schema engine's diff would drop a table Prisma does not know: lib/cli/schema-engine/engine.ts
-- names this table and FTS5's shadow tables as external, so later migrations leave them alone.
CREATE VIRTUAL TABLE "operation_search" USING fts5(
    "head",
    "body",
    "operation_id" UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 2'
);
