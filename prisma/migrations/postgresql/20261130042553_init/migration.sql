-- CreateTable
CREATE TABLE "chain_records" (
    "seq" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "operation_id" TEXT,
    "stage" TEXT,
    "observed_at" TEXT,
    "recorded_at" TEXT NOT NULL,
    "actor" TEXT,
    "payload" TEXT NOT NULL,
    "prev_hash" TEXT NOT NULL,
    "hash" TEXT NOT NULL,

    CONSTRAINT "chain_records_pkey" PRIMARY KEY ("seq")
);

-- CreateTable
CREATE TABLE "chain_lock" (
    "id" INTEGER NOT NULL,
    "n" INTEGER NOT NULL,

    CONSTRAINT "chain_lock_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "operations" (
    "operation_id" TEXT NOT NULL,
    "created_seq" INTEGER NOT NULL,
    "created_at" TEXT NOT NULL,

    CONSTRAINT "operations_pkey" PRIMARY KEY ("operation_id")
);

-- CreateTable
CREATE TABLE "operation_views" (
    "operation_id" TEXT NOT NULL,
    "created_seq" INTEGER NOT NULL,
    "created_at" TEXT NOT NULL,
    "last_seq" INTEGER NOT NULL,
    "updated_at" TEXT NOT NULL,
    "tool" TEXT,
    "agent" TEXT,
    "target" TEXT,
    "trajectory_id" TEXT,
    "claimed_outcome" TEXT,
    "receipt_status" TEXT,
    "receipt_id" TEXT,
    "outcome" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "failure_category" INTEGER,
    "effective_outcome" TEXT NOT NULL,
    "needs_review" BOOLEAN NOT NULL,
    "overclaimed" BOOLEAN NOT NULL,
    "stage_count" INTEGER NOT NULL,
    "correction_count" INTEGER NOT NULL,
    "last_correction_id" TEXT,

    CONSTRAINT "operation_views_pkey" PRIMARY KEY ("operation_id")
);

-- CreateTable
CREATE TABLE "operation_keys" (
    "key" TEXT NOT NULL,
    "operation_id" TEXT NOT NULL,

    CONSTRAINT "operation_keys_pkey" PRIMARY KEY ("key","operation_id")
);

-- CreateTable
CREATE TABLE "operation_edges" (
    "operation_id" TEXT NOT NULL,
    "depends_on" TEXT NOT NULL,

    CONSTRAINT "operation_edges_pkey" PRIMARY KEY ("operation_id","depends_on")
);

-- CreateTable
CREATE TABLE "users" (
    "id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "name" TEXT,
    "password_hash" TEXT,
    "role" TEXT NOT NULL,
    "disabled" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMP(3) NOT NULL,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_tokens" (
    "id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "last4" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "scopes" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,
    "last_used_at" TIMESTAMP(3),
    "revoked_at" TIMESTAMP(3),

    CONSTRAINT "api_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "chain_records_hash_key" ON "chain_records"("hash");

-- CreateIndex
CREATE INDEX "chain_records_operation_id_seq_idx" ON "chain_records"("operation_id", "seq");

-- CreateIndex
CREATE INDEX "chain_records_kind_seq_idx" ON "chain_records"("kind", "seq");

-- CreateIndex
CREATE INDEX "chain_records_recorded_at_idx" ON "chain_records"("recorded_at");

-- CreateIndex
CREATE UNIQUE INDEX "operations_created_seq_key" ON "operations"("created_seq");

-- CreateIndex
CREATE UNIQUE INDEX "operation_views_created_seq_key" ON "operation_views"("created_seq");

-- CreateIndex
CREATE INDEX "operation_views_effective_outcome_created_seq_idx" ON "operation_views"("effective_outcome", "created_seq");

-- CreateIndex
CREATE INDEX "operation_views_outcome_created_seq_idx" ON "operation_views"("outcome", "created_seq");

-- CreateIndex
CREATE INDEX "operation_views_tool_created_seq_idx" ON "operation_views"("tool", "created_seq");

-- CreateIndex
CREATE INDEX "operation_views_trajectory_id_created_seq_idx" ON "operation_views"("trajectory_id", "created_seq");

-- CreateIndex
CREATE INDEX "operation_views_needs_review_created_seq_idx" ON "operation_views"("needs_review", "created_seq");

-- CreateIndex
CREATE INDEX "operation_views_created_at_idx" ON "operation_views"("created_at");

-- CreateIndex
CREATE INDEX "operation_keys_operation_id_idx" ON "operation_keys"("operation_id");

-- CreateIndex
CREATE INDEX "operation_edges_depends_on_idx" ON "operation_edges"("depends_on");

-- CreateIndex
CREATE UNIQUE INDEX "users_email_key" ON "users"("email");

-- CreateIndex
CREATE UNIQUE INDEX "api_tokens_token_hash_key" ON "api_tokens"("token_hash");

-- CreateIndex
CREATE INDEX "api_tokens_user_id_idx" ON "api_tokens"("user_id");

-- AddForeignKey
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Append-only audit trail (hand-written: the Prisma schema cannot express triggers).
-- The hash chain and operation identities are never changed or removed once written:
-- UPDATE, DELETE and TRUNCATE are refused with "<table> is append-only".
CREATE FUNCTION "refuse_append_only_change"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END;
$$;

CREATE TRIGGER "chain_records_append_only" BEFORE UPDATE OR DELETE ON "chain_records"
    FOR EACH ROW EXECUTE FUNCTION "refuse_append_only_change"();

CREATE TRIGGER "chain_records_no_truncate" BEFORE TRUNCATE ON "chain_records"
    FOR EACH STATEMENT EXECUTE FUNCTION "refuse_append_only_change"();

CREATE TRIGGER "operations_append_only" BEFORE UPDATE OR DELETE ON "operations"
    FOR EACH ROW EXECUTE FUNCTION "refuse_append_only_change"();

CREATE TRIGGER "operations_no_truncate" BEFORE TRUNCATE ON "operations"
    FOR EACH STATEMENT EXECUTE FUNCTION "refuse_append_only_change"();
