-- CreateTable
CREATE TABLE "refusal_windows" (
    "actor" TEXT NOT NULL,
    "permission" TEXT NOT NULL,
    "window_end" TEXT NOT NULL,
    "first_at" TEXT NOT NULL,
    "last_at" TEXT NOT NULL,
    "count" INTEGER NOT NULL,
    "tallied" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "refusal_windows_pkey" PRIMARY KEY ("actor","permission","window_end")
);

-- CreateIndex
CREATE INDEX "refusal_windows_tallied_window_end_idx" ON "refusal_windows"("tallied", "window_end");
