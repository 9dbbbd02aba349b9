-- CreateTable
CREATE TABLE "verifier_versions" (
    "name" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "tool" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL,
    "definition" TEXT NOT NULL,
    "created_at" TEXT NOT NULL,
    "created_by" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,

    CONSTRAINT "verifier_versions_pkey" PRIMARY KEY ("name","version")
);

-- CreateIndex
CREATE INDEX "verifier_versions_tool_idx" ON "verifier_versions"("tool");

-- Written by hand: every version is kept; a change is a new version.
CREATE TRIGGER "verifier_versions_append_only" BEFORE UPDATE OR DELETE ON "verifier_versions"
    FOR EACH ROW EXECUTE FUNCTION "refuse_append_only_change"();

CREATE TRIGGER "verifier_versions_no_truncate" BEFORE TRUNCATE ON "verifier_versions"
    FOR EACH STATEMENT EXECUTE FUNCTION "refuse_append_only_change"();
