-- CreateTable
CREATE TABLE "instance_checkpoints" (
    "size" INTEGER NOT NULL,
    "head" TEXT NOT NULL,
    "time" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "signature" TEXT NOT NULL,

    CONSTRAINT "instance_checkpoints_pkey" PRIMARY KEY ("size")
);

-- Written by hand. A signed checkpoint is never changed or removed.
CREATE TRIGGER "instance_checkpoints_append_only" BEFORE UPDATE OR DELETE ON "instance_checkpoints"
    FOR EACH ROW EXECUTE FUNCTION "refuse_append_only_change"();

CREATE TRIGGER "instance_checkpoints_no_truncate" BEFORE TRUNCATE ON "instance_checkpoints"
    FOR EACH STATEMENT EXECUTE FUNCTION "refuse_append_only_change"();
