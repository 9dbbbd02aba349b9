-- CreateTable
CREATE TABLE "otel_trace_links" (
    "trace_id" TEXT NOT NULL,
    "owner_id" TEXT NOT NULL,
    "conversation_id" TEXT,
    "agent" TEXT,
    "created_at" TEXT NOT NULL,

    CONSTRAINT "otel_trace_links_pkey" PRIMARY KEY ("trace_id","owner_id")
);
