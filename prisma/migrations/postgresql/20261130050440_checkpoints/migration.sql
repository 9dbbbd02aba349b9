-- CreateTable
CREATE TABLE "checkpoints" (
    "id" SERIAL NOT NULL,
    "size" INTEGER NOT NULL,
    "head" TEXT NOT NULL,
    "time" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "signature" TEXT NOT NULL,

    CONSTRAINT "checkpoints_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "checkpoints_size_idx" ON "checkpoints"("size");

-- Written by hand: checkpoints are append-only like the chain they attest.
CREATE TRIGGER "checkpoints_append_only" BEFORE UPDATE OR DELETE ON "checkpoints"
    FOR EACH ROW EXECUTE FUNCTION "refuse_append_only_change"();

CREATE TRIGGER "checkpoints_no_truncate" BEFORE TRUNCATE ON "checkpoints"
    FOR EACH STATEMENT EXECUTE FUNCTION "refuse_append_only_change"();
