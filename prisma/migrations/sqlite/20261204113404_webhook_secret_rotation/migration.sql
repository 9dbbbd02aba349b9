-- AlterTable
ALTER TABLE "webhook_endpoints" ADD COLUMN "previous_secret_expires_at" TEXT;
ALTER TABLE "webhook_endpoints" ADD COLUMN "previous_secret_hint" TEXT;
ALTER TABLE "webhook_endpoints" ADD COLUMN "previous_secret_sealed" TEXT;
ALTER TABLE "webhook_endpoints" ADD COLUMN "secret_rotated_at" TEXT;
