-- Verdicts to several targets (issue 52): each row is one change for one target
-- (otlp, phoenix, langfuse); rows written before are the OTLP export's.
ALTER TABLE "verdict_exports" ADD COLUMN "target" TEXT NOT NULL DEFAULT 'otlp';

-- CreateIndex
CREATE INDEX "verdict_exports_target_operation_id_idx" ON "verdict_exports"("target", "operation_id");
