-- Written by hand (issue 47). The delete guard of 20261204184218_sealed_through let any
-- sealed_through row unlock a delete, whatever its chain. Retention seals a database of one chain
-- only, whose every record is chain 0: a record or an operation may now be deleted only within a
-- chain-0 row, and only in a database of one chain (with several, a record's chain is a hash of
-- its operation id: nothing may be deleted there). A row naming a chain the database does not
-- have is refused. audit:verify then holds each row against the chained archive.sealed record
-- that sealing writes (lib/store/archive/sealed-rows.ts). (PostgreSQL has no INSERT OR REPLACE: an
-- INSERT … ON CONFLICT DO UPDATE is an UPDATE, which the triggers refuse.)
CREATE OR REPLACE FUNCTION "refuse_unsealed_delete"() RETURNS trigger
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
        IF COALESCE((SELECT "chains" FROM "chain_settings" ORDER BY "id" LIMIT 1), 1) = 1
           AND EXISTS (SELECT 1 FROM "sealed_through" t WHERE t."chain" = 0 AND s BETWEEN t."first_seq" AND t."sealed_through_seq") THEN
            RETURN OLD;
        END IF;
    END IF;
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END;
$$;

CREATE OR REPLACE FUNCTION "sealed_through_check_order"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW."chain" < 0 OR NEW."chain" >= COALESCE((SELECT "chains" FROM "chain_settings" ORDER BY "id" LIMIT 1), 1) THEN
        RAISE EXCEPTION 'sealed_through: no such chain in this database';
    END IF;
    IF NEW."first_seq" > NEW."sealed_through_seq"
       OR NEW."first_seq" <= COALESCE((SELECT MAX("sealed_through_seq") FROM "sealed_through" WHERE "chain" = NEW."chain"), 0) THEN
        RAISE EXCEPTION 'sealed_through: a segment must start after the chain''s last sealed seq';
    END IF;
    RETURN NEW;
END;
$$;
