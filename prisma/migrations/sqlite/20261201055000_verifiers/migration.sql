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

    PRIMARY KEY ("name", "version")
);

-- CreateIndex
CREATE INDEX "verifier_versions_tool_idx" ON "verifier_versions"("tool");

-- Written by hand: every version is kept; a change is a new version.
CREATE TRIGGER "verifier_versions_no_update" BEFORE UPDATE ON "verifier_versions"
BEGIN
    SELECT RAISE(ABORT, 'verifier_versions is append-only');
END;

CREATE TRIGGER "verifier_versions_no_delete" BEFORE DELETE ON "verifier_versions"
BEGIN
    SELECT RAISE(ABORT, 'verifier_versions is append-only');
END;
