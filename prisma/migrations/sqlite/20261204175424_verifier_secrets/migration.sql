-- CreateTable
CREATE TABLE "verifier_secrets" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "sealed" TEXT NOT NULL,
    "created_at" TEXT NOT NULL,
    "updated_at" TEXT NOT NULL,
    "updated_by" TEXT NOT NULL
);
