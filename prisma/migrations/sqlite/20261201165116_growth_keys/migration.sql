-- Issue 17 (flat ingest cost): an operation's records and search keys are found by its
-- created_seq, which grows with the chain, instead of by its id, whose random keys put every
-- new operation on a different index page (bench:growth --attribute). Hand-edited from
-- Prisma's output: the backfills below fill the new columns from the operations table.

-- chain_records: a derived, unhashed op_seq column and its index replace the operation_id index.
DROP INDEX "chain_records_operation_id_seq_idx";
ALTER TABLE "chain_records" ADD COLUMN "op_seq" INTEGER;
-- The table refuses UPDATE (append-only); this backfill of a derived column is the one
-- exception, so the trigger is dropped for it and recreated exactly as the init migration made it.
DROP TRIGGER "chain_records_no_update";
UPDATE "chain_records" SET "op_seq" = (SELECT o."created_seq" FROM "operations" o WHERE o."operation_id" = "chain_records"."operation_id")
WHERE "operation_id" IS NOT NULL;
CREATE TRIGGER "chain_records_no_update" BEFORE UPDATE ON "chain_records"
BEGIN
    SELECT RAISE(ABORT, 'chain_records is append-only');
END;
CREATE INDEX "chain_records_op_seq_seq_idx" ON "chain_records"("op_seq", "seq");

-- operation_keys: keyed by (key, created_seq); an operation's own id is no longer a key (the
-- operations table's primary key finds it).
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_operation_keys" (
    "key" TEXT NOT NULL,
    "created_seq" INTEGER NOT NULL,

    PRIMARY KEY ("key", "created_seq")
);
INSERT INTO "new_operation_keys" ("key", "created_seq")
SELECT k."key", o."created_seq" FROM "operation_keys" k JOIN "operations" o ON o."operation_id" = k."operation_id"
WHERE k."key" <> k."operation_id";
DROP TABLE "operation_keys";
ALTER TABLE "new_operation_keys" RENAME TO "operation_keys";
CREATE INDEX "operation_keys_created_seq_idx" ON "operation_keys"("created_seq");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
