import { seedOf } from "./tasks";
import { BACKENDS, fingerprintOf, rng, World, type Entry, type Intent, type Read } from "./world";

/**
 * Readers that lie (issue 37, part 2): the canonical read-back arm B makes, bent by faults of the
 * reader rather than of the tool. Each read draws at most one, deterministically from the seed,
 * the step's key and how many times that key was read:
 *
 * - `stale`: a replica that, for STALE_TICKS after a write, still returns the state before it;
 * - `empty_body`: the reader answers 200 with an empty body, which the agent's adapter reports as
 *   a match naming the object it asked for, with no fingerprint (there was nothing to hash);
 * - `cache`: a cache in front of the backend returns the value the agent meant to write, whether
 *   or not it was written (its fingerprint is the intended one).
 *
 * The primary (World.holds, the reviewer's probe, the pass^k goal) still tells the truth.
 */
export type ReaderFault = "stale" | "empty_body" | "cache";
export const READER_FAULT_RATES: Record<ReaderFault, number> = { stale: 0.1, empty_body: 0.03, cache: 0.05 };
export const STALE_TICKS = 6;

export class LyingWorld extends World {
  private readonly before = new Map<string, { entries: (Entry | undefined)[]; until: number }>();
  private readonly reads = new Map<string, number>();
  /** Every lie told that changed what the agent saw: (key, fault) in order, for the report. */
  readonly lies: { key: string; fault: ReaderFault; status: Read["status"]; truth: Read["status"] }[] = [];
  constructor(
    indexLag: number,
    private readonly seed: number,
  ) {
    super(indexLag);
  }

  override call(...args: Parameters<World["call"]>) {
    const [intent] = args;
    const names = BACKENDS[intent.tool];
    const prior = names.map((n) => this.backend(n).probe(intent.key));
    const receipt = super.call(...args);
    const after = names.map((n) => this.backend(n).probe(intent.key));
    if (after.some((e, i) => e !== prior[i])) this.before.set(intent.key, { entries: prior, until: this.now + STALE_TICKS });
    return receipt;
  }

  /** The reader fault of this read, if any. */
  fault(key: string): ReaderFault | null {
    const n = (this.reads.get(key) ?? 0) + 1;
    this.reads.set(key, n);
    const u = rng(seedOf(this.seed, "reader", key, n))();
    let acc = 0;
    for (const [f, p] of Object.entries(READER_FAULT_RATES)) {
      acc += p;
      if (u < acc) return f as ReaderFault;
    }
    return null;
  }

  override read(intent: Intent, unavailable: boolean): Read {
    const fault = unavailable ? null : this.fault(intent.key);
    const truth = super.read(intent, unavailable);
    const lie = this.lie(intent, fault);
    if (!lie || !fault) return truth;
    if (lie.status !== truth.status || lie.evidence?.fingerprint !== truth.evidence?.fingerprint) this.lies.push({ key: intent.key, fault, status: lie.status, truth: truth.status });
    return lie;
  }

  private lie(intent: Intent, fault: ReaderFault | null): Read | null {
    const object_id = `${BACKENDS[intent.tool][0]}:${intent.key}`;
    switch (fault) {
      case null:
        return null;
      case "empty_body":
        return { status: "match", evidence: { object_id, fingerprint: "" } };
      case "cache":
        return { status: "match", evidence: { object_id, fingerprint: fingerprintOf(intent.value) } };
      case "stale": {
        const b = this.before.get(intent.key);
        if (!b || this.now > b.until) return null;
        const want = fingerprintOf(intent.value);
        if (b.entries.some((e) => !e)) return { status: "absent" };
        const bad = b.entries.find((e) => !e!.complete || e!.fingerprint !== want || e!.value.dangling);
        if (bad) return { status: "mismatch", evidence: { object_id, fingerprint: bad.fingerprint } };
        return { status: "match", evidence: { object_id, fingerprint: want } };
      }
    }
  }
}
