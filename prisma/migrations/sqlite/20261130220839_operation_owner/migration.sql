-- AlterTable
ALTER TABLE "operations" ADD COLUMN "owner_id" TEXT;

-- Backfill: an operation belongs to the user whose email sent its first record. operations is
-- append-only, so the guard is lifted for this one statement and put back as it was.
DROP TRIGGER "operations_no_update";
UPDATE "operations" SET "owner_id" = (
    SELECT u."id" FROM "chain_records" c JOIN "users" u ON u."email" = c."actor" WHERE c."seq" = "operations"."created_seq"
);
CREATE TRIGGER "operations_no_update" BEFORE UPDATE ON "operations"
BEGIN
    SELECT RAISE(ABORT, 'operations is append-only');
END;
