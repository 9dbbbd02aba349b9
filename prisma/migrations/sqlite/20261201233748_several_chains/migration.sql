-- AlterTable
ALTER TABLE "chain_lock" ADD COLUMN "head_hash" TEXT;
ALTER TABLE "chain_lock" ADD COLUMN "head_seq" INTEGER;
ALTER TABLE "chain_lock" ADD COLUMN "head_records" INTEGER;

-- AlterTable
ALTER TABLE "checkpoints" ADD COLUMN "heads" TEXT;

-- CreateTable
CREATE TABLE "chain_settings" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "chains" INTEGER NOT NULL,
    "created_at" TEXT NOT NULL
);

-- The chain count is written once: every seq's chain follows from it.
CREATE TRIGGER "chain_settings_no_update" BEFORE UPDATE ON "chain_settings"
BEGIN
    SELECT RAISE(ABORT, 'chain_settings is written once');
END;

CREATE TRIGGER "chain_settings_no_delete" BEFORE DELETE ON "chain_settings"
BEGIN
    SELECT RAISE(ABORT, 'chain_settings is written once');
END;
