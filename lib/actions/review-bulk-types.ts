/** How many operations one bulk triage request may correct. */
export const BULK_LIMIT = 100;

export type BulkResult = { id: string; ok: true; effective_outcome: string } | { id: string; ok: false; code: string; message: string };
export type BulkState = { error?: string; results?: BulkResult[] } | null;
