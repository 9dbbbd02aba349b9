import "server-only";
import { fingerprintRuleProblems, type VerifierDefinition } from "@/lib/domain/verifier";
import { toolIntentsCarryFingerprints } from "@/lib/store/queries/tools";
import { ApiError } from "./errors";

/** The match rules without a fingerprint pointer, judged against the tool's recorded intents. */
async function judged(definition: VerifierDefinition) {
  const lacking = definition.expect.some((r) => r.read === "match" && r.evidence?.fingerprint === undefined);
  if (!lacking) return { refuse: false, problems: [] };
  return fingerprintRuleProblems(definition, await toolIntentsCarryFingerprints(definition.tool));
}

/**
 * Issue 54 at save: a rule that reads `match` without a fingerprint pointer, for a tool whose
 * recorded intents carry fingerprints, is refused (422, `code: "fingerprint_pointer_missing"`,
 * each rule named). When no intent of the tool has carried one yet it cannot be known, and the
 * same rules come back as warnings (sentences, as the webhooks' warnings are).
 */
export async function fingerprintRuleWarnings(definition: VerifierDefinition): Promise<string[]> {
  const { refuse, problems } = await judged(definition);
  if (refuse) {
    const details = problems.map((p) => ({ path: p.path, code: "fingerprint_pointer_missing", message: p.message }));
    throw new ApiError("invalid_request", details.map((d) => `${d.path}: ${d.message}`).join("; "), details);
  }
  return problems.map((p) => `${p.path}: ${p.message}`);
}

/** The same judgement for a dry run, which records nothing: what a save would refuse is a warning saying so. */
export async function fingerprintRuleDryRunWarnings(definition: VerifierDefinition): Promise<string[]> {
  const { refuse, problems } = await judged(definition);
  return problems.map((p) => `${refuse ? "a save would refuse this: " : ""}${p.path}: ${p.message}`);
}
