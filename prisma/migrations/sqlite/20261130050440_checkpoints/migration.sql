-- CreateTable
CREATE TABLE "checkpoints" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "size" INTEGER NOT NULL,
    "head" TEXT NOT NULL,
    "time" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "signature" TEXT NOT NULL
);

-- CreateIndex
CREATE INDEX "checkpoints_size_idx" ON "checkpoints"("size");

-- Written by hand: checkpoints are append-only like the chain they attest.
CREATE TRIGGER "checkpoints_no_update" BEFORE UPDATE ON "checkpoints"
BEGIN
    SELECT RAISE(ABORT, 'checkpoints is append-only');
END;

CREATE TRIGGER "checkpoints_no_delete" BEFORE DELETE ON "checkpoints"
BEGIN
    SELECT RAISE(ABORT, 'checkpoints is append-only');
END;
