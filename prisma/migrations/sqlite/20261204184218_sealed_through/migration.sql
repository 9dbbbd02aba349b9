-- CreateTable
CREATE TABLE "sealed_through" (
    "chain" INTEGER NOT NULL,
    "first_seq" INTEGER NOT NULL,
    "sealed_through_seq" INTEGER NOT NULL,
    "head_hash" TEXT NOT NULL,
    "records" INTEGER NOT NULL,
    "location" TEXT NOT NULL,
    "segment_sha256" TEXT NOT NULL,
    "sealed_at" TEXT NOT NULL,

    PRIMARY KEY ("chain", "sealed_through_seq")
);

-- Written by hand. sealed_through is append-only, and each chain's segments follow each other.
CREATE TRIGGER "sealed_through_no_update" BEFORE UPDATE ON "sealed_through"
BEGIN
    SELECT RAISE(ABORT, 'sealed_through is append-only');
END;

CREATE TRIGGER "sealed_through_no_delete" BEFORE DELETE ON "sealed_through"
BEGIN
    SELECT RAISE(ABORT, 'sealed_through is append-only');
END;

CREATE TRIGGER "sealed_through_in_order" BEFORE INSERT ON "sealed_through"
WHEN NEW."first_seq" > NEW."sealed_through_seq"
  OR NEW."first_seq" <= COALESCE((SELECT MAX("sealed_through_seq") FROM "sealed_through" WHERE "chain" = NEW."chain"), 0)
BEGIN
    SELECT RAISE(ABORT, 'sealed_through: a segment must start after the chain''s last sealed seq');
END;

-- The delete guard: a chain record or an operation may be deleted only within a sealed segment's
-- range (the sealing transaction inserts the segment's row, then deletes). Any other DELETE, and
-- every UPDATE, is still refused.
DROP TRIGGER "chain_records_no_delete";
CREATE TRIGGER "chain_records_no_delete" BEFORE DELETE ON "chain_records"
WHEN NOT EXISTS (SELECT 1 FROM "sealed_through" s WHERE OLD."seq" BETWEEN s."first_seq" AND s."sealed_through_seq")
BEGIN
    SELECT RAISE(ABORT, 'chain_records is append-only');
END;

DROP TRIGGER "operations_no_delete";
CREATE TRIGGER "operations_no_delete" BEFORE DELETE ON "operations"
WHEN NOT EXISTS (SELECT 1 FROM "sealed_through" s WHERE OLD."created_seq" BETWEEN s."first_seq" AND s."sealed_through_seq")
BEGIN
    SELECT RAISE(ABORT, 'operations is append-only');
END;
