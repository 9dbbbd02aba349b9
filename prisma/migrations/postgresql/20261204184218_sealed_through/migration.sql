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

    CONSTRAINT "sealed_through_pkey" PRIMARY KEY ("chain","sealed_through_seq")
);

-- Written by hand. sealed_through is append-only, and each chain's segments follow each other.
CREATE TRIGGER "sealed_through_append_only" BEFORE UPDATE OR DELETE ON "sealed_through"
    FOR EACH ROW EXECUTE FUNCTION "refuse_append_only_change"();
CREATE TRIGGER "sealed_through_no_truncate" BEFORE TRUNCATE ON "sealed_through"
    FOR EACH STATEMENT EXECUTE FUNCTION "refuse_append_only_change"();

CREATE FUNCTION "sealed_through_check_order"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW."first_seq" > NEW."sealed_through_seq"
       OR NEW."first_seq" <= COALESCE((SELECT MAX("sealed_through_seq") FROM "sealed_through" WHERE "chain" = NEW."chain"), 0) THEN
        RAISE EXCEPTION 'sealed_through: a segment must start after the chain''s last sealed seq';
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER "sealed_through_in_order" BEFORE INSERT ON "sealed_through"
    FOR EACH ROW EXECUTE FUNCTION "sealed_through_check_order"();

-- The delete guard: a chain record or an operation may be deleted only within a sealed segment's
-- range (the sealing transaction inserts the segment's row, then deletes). Any other DELETE,
-- every UPDATE and TRUNCATE are still refused.
CREATE FUNCTION "refuse_unsealed_delete"() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    s integer;
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF TG_TABLE_NAME = 'operations' THEN
            s := OLD."created_seq";
        ELSE
            s := OLD."seq";
        END IF;
        IF EXISTS (SELECT 1 FROM "sealed_through" t WHERE s BETWEEN t."first_seq" AND t."sealed_through_seq") THEN
            RETURN OLD;
        END IF;
    END IF;
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END;
$$;

DROP TRIGGER "chain_records_append_only" ON "chain_records";
CREATE TRIGGER "chain_records_append_only" BEFORE UPDATE OR DELETE ON "chain_records"
    FOR EACH ROW EXECUTE FUNCTION "refuse_unsealed_delete"();

DROP TRIGGER "operations_append_only" ON "operations";
CREATE TRIGGER "operations_append_only" BEFORE UPDATE OR DELETE ON "operations"
    FOR EACH ROW EXECUTE FUNCTION "refuse_unsealed_delete"();
