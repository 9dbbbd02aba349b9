-- Written by hand (issue 47). The delete guard of 20261204184218_sealed_through let any
-- sealed_through row unlock a delete, whatever its chain. Retention seals a database of one chain
-- only, whose every record is chain 0: a record or an operation may now be deleted only within a
-- chain-0 row, and only in a database of one chain (with several, a record's chain is a hash of
-- its operation id, which a trigger cannot compute: nothing may be deleted there). A row naming a
-- chain the database does not have is refused. audit:verify then holds each row against the
-- chained archive.sealed record that sealing writes (lib/store/archive/sealed-rows.ts).
DROP TRIGGER "chain_records_no_delete";
CREATE TRIGGER "chain_records_no_delete" BEFORE DELETE ON "chain_records"
WHEN NOT EXISTS (
    SELECT 1 FROM "sealed_through" s
    WHERE s."chain" = 0 AND OLD."seq" BETWEEN s."first_seq" AND s."sealed_through_seq"
      AND COALESCE((SELECT "chains" FROM "chain_settings" ORDER BY "id" LIMIT 1), 1) = 1
)
BEGIN
    SELECT RAISE(ABORT, 'chain_records is append-only');
END;

DROP TRIGGER "operations_no_delete";
CREATE TRIGGER "operations_no_delete" BEFORE DELETE ON "operations"
WHEN NOT EXISTS (
    SELECT 1 FROM "sealed_through" s
    WHERE s."chain" = 0 AND OLD."created_seq" BETWEEN s."first_seq" AND s."sealed_through_seq"
      AND COALESCE((SELECT "chains" FROM "chain_settings" ORDER BY "id" LIMIT 1), 1) = 1
)
BEGIN
    SELECT RAISE(ABORT, 'operations is append-only');
END;

CREATE TRIGGER "sealed_through_known_chain" BEFORE INSERT ON "sealed_through"
WHEN NEW."chain" < 0 OR NEW."chain" >= COALESCE((SELECT "chains" FROM "chain_settings" ORDER BY "id" LIMIT 1), 1)
BEGIN
    SELECT RAISE(ABORT, 'sealed_through: no such chain in this database');
END;

-- INSERT OR REPLACE (and REPLACE INTO) removes the row whose key it takes without firing any
-- DELETE trigger (SQLite fires them for REPLACE only under PRAGMA recursive_triggers, which is per
-- connection). So an insert whose key is already taken is refused before the replace can happen.
-- A plain INSERT of a taken key was refused anyway (by the key); nothing the server runs does so.
CREATE TRIGGER "chain_records_no_replace" BEFORE INSERT ON "chain_records"
WHEN EXISTS (SELECT 1 FROM "chain_records" WHERE "seq" = NEW."seq")
BEGIN
    SELECT RAISE(ABORT, 'chain_records is append-only');
END;

CREATE TRIGGER "operations_no_replace" BEFORE INSERT ON "operations"
WHEN EXISTS (SELECT 1 FROM "operations" WHERE "operation_id" = NEW."operation_id" OR "created_seq" = NEW."created_seq")
BEGIN
    SELECT RAISE(ABORT, 'operations is append-only');
END;

CREATE TRIGGER "instance_events_no_replace" BEFORE INSERT ON "instance_events"
WHEN EXISTS (SELECT 1 FROM "instance_events" WHERE "seq" = NEW."seq")
BEGIN
    SELECT RAISE(ABORT, 'instance_events is append-only');
END;

CREATE TRIGGER "sealed_through_no_replace" BEFORE INSERT ON "sealed_through"
WHEN EXISTS (SELECT 1 FROM "sealed_through" WHERE "chain" = NEW."chain" AND "sealed_through_seq" = NEW."sealed_through_seq")
BEGIN
    SELECT RAISE(ABORT, 'sealed_through is append-only');
END;

CREATE TRIGGER "checkpoints_no_replace" BEFORE INSERT ON "checkpoints"
WHEN EXISTS (SELECT 1 FROM "checkpoints" WHERE "id" = NEW."id")
BEGIN
    SELECT RAISE(ABORT, 'checkpoints is append-only');
END;

CREATE TRIGGER "instance_checkpoints_no_replace" BEFORE INSERT ON "instance_checkpoints"
WHEN EXISTS (SELECT 1 FROM "instance_checkpoints" WHERE "size" = NEW."size")
BEGIN
    SELECT RAISE(ABORT, 'instance_checkpoints is append-only');
END;

CREATE TRIGGER "verifier_versions_no_replace" BEFORE INSERT ON "verifier_versions"
WHEN EXISTS (SELECT 1 FROM "verifier_versions" WHERE "name" = NEW."name" AND "version" = NEW."version")
BEGIN
    SELECT RAISE(ABORT, 'verifier_versions is append-only');
END;

CREATE TRIGGER "chain_settings_no_replace" BEFORE INSERT ON "chain_settings"
WHEN EXISTS (SELECT 1 FROM "chain_settings" WHERE "id" = NEW."id")
BEGIN
    SELECT RAISE(ABORT, 'chain_settings is written once');
END;
