-- Free-text search (written by hand: the schema language has no tsvector type or GIN index).
-- One row per operation; `head` holds the identifying fields (tool, target, effect, agent,
-- trajectory, ids), `body` the rest (reasons, params, evidence, side effects), both as
-- "label: value" lines, and `document` their words with positions, the head's weighted A, built
-- by lib/domain/search.ts (no text search configuration: the same words as SQLite's FTS5, ids and
-- numbers kept). Kept by writeProjection in the projection's transaction; recreated by
-- `projections:rebuild`, which is also how a database that existed before this migration gets
-- its rows (docs/API.md). lib/cli/schema-engine/engine.ts names these tables as external, so the
-- schema engine's diff never drops it.
-- The text shown as "where it matched" lives in its own table: the rows a search scans stay
-- narrow (docs/BENCHMARKS.md, search-scale), and only a page's few texts are read.
CREATE TABLE "operation_search" (
    "created_seq" INTEGER NOT NULL,
    "operation_id" TEXT NOT NULL,
    "document" tsvector NOT NULL,

    CONSTRAINT "operation_search_pkey" PRIMARY KEY ("created_seq")
);

CREATE INDEX "operation_search_document_idx" ON "operation_search" USING GIN ("document");

-- Words of a few tens of operations are common; of most, rare: a finer estimate of each word's
-- share lets the planner choose between walking the newest rows and the GIN index.
ALTER TABLE "operation_search" ALTER COLUMN "document" SET STATISTICS 1000;

CREATE TABLE "operation_search_text" (
    "created_seq" INTEGER NOT NULL,
    "head" TEXT NOT NULL,
    "body" TEXT NOT NULL,

    CONSTRAINT "operation_search_text_pkey" PRIMARY KEY ("created_seq")
);
