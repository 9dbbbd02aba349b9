-- Projects (lib/domain/projects.ts). This database becomes the project `default`, every record
-- where it was; each user's role becomes their membership of it (its admins are the instance's).
-- users.role goes: a role is a project's now.
-- CreateTable
CREATE TABLE "projects" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TEXT NOT NULL,
    "created_by" TEXT,
    "retention_days" INTEGER,
    "ready_at" TEXT
);

-- CreateTable
CREATE TABLE "project_members" (
    "project_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "created_at" TEXT NOT NULL,

    PRIMARY KEY ("project_id", "user_id"),
    CONSTRAINT "project_members_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects" ("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "project_members_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

INSERT INTO "projects" ("id", "slug", "name", "created_at", "created_by", "retention_days", "ready_at")
VALUES ('default', 'default', 'Default', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NULL, NULL, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
INSERT INTO "project_members" ("project_id", "user_id", "role", "created_at")
SELECT 'default', "id", "role", strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM "users" WHERE "role" IN ('viewer', 'reviewer', 'admin');

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_api_tokens" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "user_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "last4" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "scopes" TEXT NOT NULL,
    "project_id" TEXT NOT NULL DEFAULT 'default',
    "created_at" DATETIME NOT NULL,
    "last_used_at" DATETIME,
    "revoked_at" DATETIME,
    CONSTRAINT "api_tokens_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);
INSERT INTO "new_api_tokens" ("created_at", "id", "last4", "last_used_at", "name", "prefix", "revoked_at", "scopes", "token_hash", "user_id") SELECT "created_at", "id", "last4", "last_used_at", "name", "prefix", "revoked_at", "scopes", "token_hash", "user_id" FROM "api_tokens";
DROP TABLE "api_tokens";
ALTER TABLE "new_api_tokens" RENAME TO "api_tokens";
CREATE UNIQUE INDEX "api_tokens_token_hash_key" ON "api_tokens"("token_hash");
CREATE INDEX "api_tokens_user_id_idx" ON "api_tokens"("user_id");
CREATE TABLE "new_users" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "email" TEXT NOT NULL,
    "name" TEXT,
    "password_hash" TEXT,
    "disabled" BOOLEAN NOT NULL DEFAULT false,
    "session_version" INTEGER NOT NULL DEFAULT 0,
    "must_change_password" BOOLEAN NOT NULL DEFAULT false,
    "created_at" DATETIME NOT NULL,
    "updated_at" DATETIME NOT NULL
);
INSERT INTO "new_users" ("created_at", "disabled", "email", "id", "must_change_password", "name", "password_hash", "session_version", "updated_at") SELECT "created_at", "disabled", "email", "id", "must_change_password", "name", "password_hash", "session_version", "updated_at" FROM "users";
DROP TABLE "users";
ALTER TABLE "new_users" RENAME TO "users";
CREATE UNIQUE INDEX "users_email_key" ON "users"("email");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE UNIQUE INDEX "projects_slug_key" ON "projects"("slug");

-- CreateIndex
CREATE INDEX "project_members_user_id_idx" ON "project_members"("user_id");
