-- Issue 17 (flat ingest cost): an operation's records and search keys are found by its
-- created_seq, which grows with the chain, instead of by its id, whose random keys put every
-- new operation on a different index page (bench:growth --attribute). Hand-edited from
-- Prisma's output: the backfills below fill the new columns from the operations table.

-- chain_records: a derived, unhashed op_seq column and its index replace the operation_id index.
DROP INDEX "chain_records_operation_id_seq_idx";
ALTER TABLE "chain_records" ADD COLUMN     "op_seq" INTEGER;
-- The table refuses UPDATE (append-only); this backfill of a derived column is the one exception.
ALTER TABLE "chain_records" DISABLE TRIGGER "chain_records_append_only";
UPDATE "chain_records" c SET "op_seq" = o."created_seq" FROM "operations" o WHERE o."operation_id" = c."operation_id";
ALTER TABLE "chain_records" ENABLE TRIGGER "chain_records_append_only";
CREATE INDEX "chain_records_op_seq_seq_idx" ON "chain_records"("op_seq", "seq");

-- operation_keys: keyed by (key, created_seq); an operation's own id is no longer a key (the
-- operations table's primary key finds it).
DROP INDEX "operation_keys_operation_id_idx";
ALTER TABLE "operation_keys" ADD COLUMN "created_seq" INTEGER;
DELETE FROM "operation_keys" WHERE "key" = "operation_id";
UPDATE "operation_keys" k SET "created_seq" = o."created_seq" FROM "operations" o WHERE o."operation_id" = k."operation_id";
DELETE FROM "operation_keys" WHERE "created_seq" IS NULL;
ALTER TABLE "operation_keys" DROP CONSTRAINT "operation_keys_pkey",
DROP COLUMN "operation_id",
ALTER COLUMN "created_seq" SET NOT NULL,
ADD CONSTRAINT "operation_keys_pkey" PRIMARY KEY ("key", "created_seq");
CREATE INDEX "operation_keys_created_seq_idx" ON "operation_keys"("created_seq");
