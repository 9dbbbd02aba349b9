-- AlterTable
ALTER TABLE "chain_lock" ADD COLUMN     "head_hash" TEXT,
ADD COLUMN     "head_records" INTEGER,
ADD COLUMN     "head_seq" INTEGER;

-- AlterTable
ALTER TABLE "checkpoints" ADD COLUMN     "heads" TEXT;

-- CreateTable
CREATE TABLE "chain_settings" (
    "id" INTEGER NOT NULL,
    "chains" INTEGER NOT NULL,
    "created_at" TEXT NOT NULL,

    CONSTRAINT "chain_settings_pkey" PRIMARY KEY ("id")
);

-- The chain count is written once: every seq's chain follows from it.
CREATE TRIGGER "chain_settings_append_only" BEFORE UPDATE OR DELETE ON "chain_settings"
    FOR EACH ROW EXECUTE FUNCTION "refuse_append_only_change"();

CREATE TRIGGER "chain_settings_no_truncate" BEFORE TRUNCATE ON "chain_settings"
    FOR EACH STATEMENT EXECUTE FUNCTION "refuse_append_only_change"();
