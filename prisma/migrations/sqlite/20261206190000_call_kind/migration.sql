-- What a call does to the world (lib/domain/call-kind.ts): read, idempotent or write. Every
-- operation recorded before is a write, as the projection derives it from an envelope without one.
ALTER TABLE "operation_views" ADD COLUMN "kind" TEXT NOT NULL DEFAULT 'write';
