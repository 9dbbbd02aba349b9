-- CreateTable
CREATE TABLE "user_job_leases" (
    "user_id" TEXT NOT NULL PRIMARY KEY,
    "job" TEXT NOT NULL,
    "holder" TEXT NOT NULL,
    "lease_until" BIGINT NOT NULL
);
