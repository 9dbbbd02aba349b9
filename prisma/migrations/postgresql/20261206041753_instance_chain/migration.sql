-- CreateTable
CREATE TABLE "instance_events" (
    "seq" INTEGER NOT NULL,
    "recorded_at" TEXT NOT NULL,
    "actor" TEXT,
    "payload" TEXT NOT NULL,
    "prev_hash" TEXT NOT NULL,
    "hash" TEXT NOT NULL,

    CONSTRAINT "instance_events_pkey" PRIMARY KEY ("seq")
);

-- Written by hand. The instance's security events are append-only, as chain_records: UPDATE,
-- DELETE and TRUNCATE are refused (retention does not seal this chain).
CREATE TRIGGER "instance_events_append_only" BEFORE UPDATE OR DELETE ON "instance_events"
    FOR EACH ROW EXECUTE FUNCTION "refuse_append_only_change"();

CREATE TRIGGER "instance_events_no_truncate" BEFORE TRUNCATE ON "instance_events"
    FOR EACH STATEMENT EXECUTE FUNCTION "refuse_append_only_change"();
