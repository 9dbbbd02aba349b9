-- CreateTable
CREATE TABLE "oidc_identities" (
    "issuer" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL,

    PRIMARY KEY ("issuer", "subject"),
    CONSTRAINT "oidc_identities_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "signin_throttle_notices" (
    "key" TEXT NOT NULL,
    "window_end" TEXT NOT NULL,
    "created_at" TEXT NOT NULL,

    PRIMARY KEY ("key", "window_end")
);

-- CreateTable
CREATE TABLE "setup_code" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "code" TEXT NOT NULL,
    "created_at" TEXT NOT NULL
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_users" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "email" TEXT NOT NULL,
    "name" TEXT,
    "password_hash" TEXT,
    "role" TEXT NOT NULL,
    "disabled" BOOLEAN NOT NULL DEFAULT false,
    "session_version" INTEGER NOT NULL DEFAULT 0,
    "created_at" DATETIME NOT NULL,
    "updated_at" DATETIME NOT NULL
);
INSERT INTO "new_users" ("created_at", "disabled", "email", "id", "name", "password_hash", "role", "updated_at") SELECT "created_at", "disabled", "email", "id", "name", "password_hash", "role", "updated_at" FROM "users";
DROP TABLE "users";
ALTER TABLE "new_users" RENAME TO "users";
CREATE UNIQUE INDEX "users_email_key" ON "users"("email");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "oidc_identities_user_id_idx" ON "oidc_identities"("user_id");

-- CreateIndex
CREATE UNIQUE INDEX "oidc_identities_issuer_user_id_key" ON "oidc_identities"("issuer", "user_id");

-- CreateIndex
CREATE INDEX "signin_throttle_notices_window_end_idx" ON "signin_throttle_notices"("window_end");

-- Account throttle keys are now SHA-256 digests of the typed identifier: drop the old ones, which
-- kept the identifier as typed (sometimes a password typed into the email field).
DELETE FROM "rate_limits" WHERE "key" LIKE 'signin-account:%';
