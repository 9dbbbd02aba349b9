-- CreateIndex
CREATE INDEX "operation_views_review_created_seq_idx" ON "operation_views"("review", "created_seq");
