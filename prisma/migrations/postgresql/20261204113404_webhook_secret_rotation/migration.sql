-- AlterTable
ALTER TABLE "webhook_endpoints" ADD COLUMN     "previous_secret_expires_at" TEXT,
ADD COLUMN     "previous_secret_hint" TEXT,
ADD COLUMN     "previous_secret_sealed" TEXT,
ADD COLUMN     "secret_rotated_at" TEXT;
