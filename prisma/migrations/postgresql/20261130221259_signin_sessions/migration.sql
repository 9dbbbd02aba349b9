-- AlterTable
ALTER TABLE "users" ADD COLUMN     "session_version" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "oidc_identities" (
    "issuer" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "oidc_identities_pkey" PRIMARY KEY ("issuer","subject")
);

-- CreateTable
CREATE TABLE "signin_throttle_notices" (
    "key" TEXT NOT NULL,
    "window_end" TEXT NOT NULL,
    "created_at" TEXT NOT NULL,

    CONSTRAINT "signin_throttle_notices_pkey" PRIMARY KEY ("key","window_end")
);

-- CreateTable
CREATE TABLE "setup_code" (
    "id" INTEGER NOT NULL,
    "code" TEXT NOT NULL,
    "created_at" TEXT NOT NULL,

    CONSTRAINT "setup_code_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "oidc_identities_user_id_idx" ON "oidc_identities"("user_id");

-- CreateIndex
CREATE UNIQUE INDEX "oidc_identities_issuer_user_id_key" ON "oidc_identities"("issuer", "user_id");

-- CreateIndex
CREATE INDEX "signin_throttle_notices_window_end_idx" ON "signin_throttle_notices"("window_end");

-- AddForeignKey
ALTER TABLE "oidc_identities" ADD CONSTRAINT "oidc_identities_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Account throttle keys are now SHA-256 digests of the typed identifier: drop the old ones, which
-- kept the identifier as typed (sometimes a password typed into the email field).
DELETE FROM "rate_limits" WHERE "key" LIKE 'signin-account:%';
