-- docs/DOMAIN.md "False claims": an overclaimed success is one the agent claimed while the claim
-- is withdrawn or the outcome is uncertain, divergent, rejected or not_applied; it stays counted
-- after a review. Before this, a retraction or a resolve as not_applied took it off the count.
-- Data written before this migration could withdraw a claim only by a retraction.
UPDATE "operation_views" SET "overclaimed" = TRUE
 WHERE "claimed_outcome" = 'success' AND NOT "overclaimed"
   AND ("effective_outcome" IN ('uncertain', 'divergent', 'rejected', 'not_applied')
        OR EXISTS (SELECT 1 FROM "chain_records" c
                    WHERE c."kind" = 'correction' AND c."operation_id" = "operation_views"."operation_id"
                      AND (c."payload"::jsonb ->> 'action') = 'retract'));

-- The review and overview counts by the new flag (as the overview_rollups migration built them).
DELETE FROM "outcome_rollups";
INSERT INTO "outcome_rollups" ("day", "tool", "effective_outcome", "needs_review", "overclaimed", "operations")
SELECT substr("created_at", 1, 10), COALESCE("tool", ''), "effective_outcome", "needs_review", "overclaimed", COUNT(*)
  FROM "operation_views"
 GROUP BY substr("created_at", 1, 10), COALESCE("tool", ''), "effective_outcome", "needs_review", "overclaimed";
