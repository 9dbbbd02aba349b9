-- CreateTable
CREATE TABLE "instance_checkpoints" (
    "size" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "head" TEXT NOT NULL,
    "time" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "signature" TEXT NOT NULL
);

-- Written by hand. A signed checkpoint is never changed or removed.
CREATE TRIGGER "instance_checkpoints_no_update" BEFORE UPDATE ON "instance_checkpoints"
BEGIN
    SELECT RAISE(ABORT, 'instance_checkpoints is append-only');
END;

CREATE TRIGGER "instance_checkpoints_no_delete" BEFORE DELETE ON "instance_checkpoints"
BEGIN
    SELECT RAISE(ABORT, 'instance_checkpoints is append-only');
END;
