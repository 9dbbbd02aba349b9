import "server-only";
import { jsonEqual } from "@/lib/domain/hash";
import type { VerifierDefinition, VerifierVersion } from "@/lib/domain/verifier";
import { appendToChain, lockChain } from "../chain/chain";
import { reader, writeTransaction } from "../db/db";
import { StoreError } from "../errors";
import { securityEvent } from "@/lib/domain/security-events";
import { asSql, inList, placeholder, type SqlLike } from "../db/sql";

/**
 * Verifiers as versioned records (docs/API.md "Verifiers"): every version is a row of
 * verifier_versions (append-only in the database) and a chained security record
 * (`verifier.version`) written in the same transaction. A change, a disabling, is a new version.
 * Definitions arrive validated (lib/domain/verifier.ts); this module only stores and reads them.
 */

type Row = { name: string; version: number | bigint; tool: string; enabled: boolean | number; definition: string; created_at: string; created_by: string; seq: number | bigint };

const COLUMNS = "name, version, tool, enabled, definition, created_at, created_by, seq";

function toVersion(r: Row): VerifierVersion {
  return {
    name: r.name,
    version: Number(r.version),
    tool: r.tool,
    enabled: Boolean(r.enabled),
    definition: JSON.parse(r.definition) as VerifierDefinition,
    created_at: r.created_at,
    created_by: r.created_by,
    seq: Number(r.seq),
  };
}

/**
 * Saves a definition as the verifier's next version (version 1 when the name is new). A
 * definition identical to the latest version's stores nothing and answers that version
 * (`created: false`). Serialised by the chain lock, so two admins saving at once get
 * consecutive versions.
 */
export async function saveVerifierVersion(definition: VerifierDefinition, actor: string): Promise<{ version: VerifierVersion; created: boolean }> {
  const enabled = definition.enabled !== false;
  const stored: VerifierDefinition = { ...definition, enabled };
  return writeTransaction(async (tx) => {
    await lockChain(tx);
    const sql = asSql(tx);
    const [latest] = await sql.all<Row>(`SELECT ${COLUMNS} FROM verifier_versions WHERE name = ${placeholder(1)} ORDER BY version DESC LIMIT 1`, [definition.name]);
    if (latest) {
      const current = toVersion(latest);
      if (jsonEqual(current.definition, stored)) return { version: current, created: false };
    }
    const version = latest ? Number(latest.version) + 1 : 1;
    const event = securityEvent({ type: "verifier.version", name: definition.name, version, tool: definition.tool, enabled, definition: stored as unknown as Record<string, unknown> });
    const [record] = await appendToChain(tx, [{ kind: "security", operation_id: null, actor, payload: event }], undefined, { locked: true });
    const row = { name: definition.name, version, tool: definition.tool, enabled, definition: JSON.stringify(stored), created_at: record.recorded_at, created_by: actor, seq: record.seq };
    await sql.insert("verifier_versions", ["name", "version", "tool", "enabled", "definition", "created_at", "created_by", "seq"], [
      [row.name, row.version, row.tool, row.enabled, row.definition, row.created_at, row.created_by, row.seq],
    ]);
    return { version: toVersion(row), created: true };
  });
}

/** A new version of the latest definition, disabled (or enabled again). Unknown name → not_found. */
export async function setVerifierEnabled(name: string, enabled: boolean, actor: string): Promise<{ version: VerifierVersion; created: boolean }> {
  const latest = await latestVerifier(name);
  if (!latest) throw new StoreError("not_found", `no verifier named ${JSON.stringify(name)}`);
  return saveVerifierVersion({ ...latest.definition, enabled }, actor);
}

/** The latest version of each verifier, by name, with how many versions it has. */
export async function listVerifiers(): Promise<(VerifierVersion & { versions: number })[]> {
  const sql = asSql(await reader());
  const rows = await sql.all<Row & { versions: number | bigint }>(
    `SELECT v.${COLUMNS.split(", ").join(", v.")}, c.versions FROM verifier_versions v
     JOIN (SELECT name, MAX(version) AS latest, COUNT(*) AS versions FROM verifier_versions GROUP BY name) c ON c.name = v.name AND c.latest = v.version
     ORDER BY v.name`,
  );
  return rows.map((r) => ({ ...toVersion(r), versions: Number(r.versions) }));
}

export async function latestVerifier(name: string): Promise<VerifierVersion | null> {
  const sql = asSql(await reader());
  const [row] = await sql.all<Row>(`SELECT ${COLUMNS} FROM verifier_versions WHERE name = ${placeholder(1)} ORDER BY version DESC LIMIT 1`, [name]);
  return row ? toVersion(row) : null;
}

/** Every version of a verifier, newest first (empty when the name is unknown). */
export async function verifierVersions(name: string): Promise<VerifierVersion[]> {
  const sql = asSql(await reader());
  return (await sql.all<Row>(`SELECT ${COLUMNS} FROM verifier_versions WHERE name = ${placeholder(1)} ORDER BY version DESC`, [name])).map(toVersion);
}

export async function verifierVersion(name: string, version: number, db?: SqlLike): Promise<VerifierVersion | null> {
  const sql = asSql(db ?? (await reader()));
  const [row] = await sql.all<Row>(`SELECT ${COLUMNS} FROM verifier_versions WHERE name = ${placeholder(1)} AND version = ${placeholder(2)}`, [name, version]);
  return row ? toVersion(row) : null;
}

/**
 * The verifiers that check receipts of these tools: of each verifier, its latest version, when
 * that version is enabled. Read inside the ingest transaction (one indexed query per batch).
 */
export async function activeVerifiersFor(db: SqlLike, tools: string[]): Promise<VerifierVersion[]> {
  if (!tools.length) return [];
  const rows = await asSql(db).all<Row>(`SELECT ${COLUMNS} FROM verifier_versions WHERE tool IN ${inList(tools.length)} ORDER BY name, version DESC`, tools);
  const latest = new Map<string, Row>();
  for (const r of rows) if (!latest.has(r.name)) latest.set(r.name, r);
  return [...latest.values()].filter((r) => Boolean(r.enabled)).map(toVersion);
}
