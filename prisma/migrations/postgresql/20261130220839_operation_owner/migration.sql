-- AlterTable
ALTER TABLE "operations" ADD COLUMN     "owner_id" TEXT;

-- Backfill: an operation belongs to the user whose email sent its first record. operations is
-- append-only, so the guard is lifted for this one statement and put back as it was.
ALTER TABLE "operations" DISABLE TRIGGER "operations_append_only";
UPDATE "operations" SET "owner_id" = (
    SELECT u."id" FROM "chain_records" c JOIN "users" u ON u."email" = c."actor" WHERE c."seq" = "operations"."created_seq"
);
ALTER TABLE "operations" ENABLE TRIGGER "operations_append_only";
