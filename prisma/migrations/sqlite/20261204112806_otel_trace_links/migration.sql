-- CreateTable
CREATE TABLE "otel_trace_links" (
    "trace_id" TEXT NOT NULL PRIMARY KEY,
    "conversation_id" TEXT,
    "agent" TEXT,
    "created_at" TEXT NOT NULL
);
