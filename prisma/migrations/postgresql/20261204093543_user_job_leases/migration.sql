-- CreateTable
CREATE TABLE "user_job_leases" (
    "user_id" TEXT NOT NULL,
    "job" TEXT NOT NULL,
    "holder" TEXT NOT NULL,
    "lease_until" BIGINT NOT NULL,

    CONSTRAINT "user_job_leases_pkey" PRIMARY KEY ("user_id")
);
