-- CreateTable
CREATE TABLE "instance_events" (
    "seq" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "recorded_at" TEXT NOT NULL,
    "actor" TEXT,
    "payload" TEXT NOT NULL,
    "prev_hash" TEXT NOT NULL,
    "hash" TEXT NOT NULL
);

-- Written by hand. The instance's security events are append-only, as chain_records: no row is
-- ever changed or removed (retention does not seal this chain).
CREATE TRIGGER "instance_events_no_update" BEFORE UPDATE ON "instance_events"
BEGIN
    SELECT RAISE(ABORT, 'instance_events is append-only');
END;

CREATE TRIGGER "instance_events_no_delete" BEFORE DELETE ON "instance_events"
BEGIN
    SELECT RAISE(ABORT, 'instance_events is append-only');
END;
