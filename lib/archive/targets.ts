import { mkdir, readFile, readdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";

/*
 * Where archive segments go (RECONCILE_ARCHIVE_URL): a directory (`file:///var/lib/reconcile/
 * archive`) or an S3-compatible bucket (`s3://bucket/prefix`, with the AWS SDK v3; region,
 * credentials and AWS_ENDPOINT_URL from the usual AWS environment variables). One small
 * interface, so sealing and verifying never ask which.
 */
export interface ArchiveTarget {
  /** The archive's URL, as the operator gave it (without credentials). */
  readonly url: string;
  put(key: string, body: Buffer): Promise<void>;
  /** The object, or null when there is none. */
  get(key: string): Promise<Buffer | null>;
  /** Every key under `prefix` (a folder such as `default/0/`), sorted. */
  list(prefix: string): Promise<string[]>;
  /** A key's full location (file:///… or s3://…), as records and pages name it. */
  locationOf(key: string): string;
}

const SAFE_KEY = /^[a-z0-9][a-z0-9-]*\/\d+\/(?:\d+-\d+\.(?:ndjson\.gz|checkpoint\.json))?$/;

function checkKey(key: string, folder = false): void {
  if (!SAFE_KEY.test(key) || (folder ? !key.endsWith("/") : key.endsWith("/"))) throw new Error(`archive: ${JSON.stringify(key)} is no segment key`);
}

/** The target RECONCILE_ARCHIVE_URL names; throws with the reason when it is no archive URL. */
export function openTarget(url: string, env: Record<string, string | undefined> = process.env): ArchiveTarget {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`RECONCILE_ARCHIVE_URL must be file:///DIR or s3://BUCKET/PREFIX; it is ${JSON.stringify(url)}`);
  }
  if (u.protocol === "file:") {
    if (u.host) throw new Error(`RECONCILE_ARCHIVE_URL: a file: URL names a local directory (file:///DIR), not a host (${u.host})`);
    return new DirectoryTarget(url, fileURLToPath(u));
  }
  if (u.protocol === "s3:") {
    if (u.username || u.password) throw new Error("RECONCILE_ARCHIVE_URL: put S3 credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, not in the URL");
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(u.hostname)) throw new Error(`RECONCILE_ARCHIVE_URL: ${JSON.stringify(u.hostname)} is no S3 bucket name`);
    return new S3Target(url, u.hostname, u.pathname.replace(/^\/+|\/+$/g, ""), env);
  }
  throw new Error(`RECONCILE_ARCHIVE_URL must be file:///DIR or s3://BUCKET/PREFIX; it is ${JSON.stringify(url)}`);
}

class DirectoryTarget implements ArchiveTarget {
  constructor(
    readonly url: string,
    private readonly dir: string,
  ) {}

  async put(key: string, body: Buffer): Promise<void> {
    checkKey(key);
    const file = path.join(this.dir, key);
    await mkdir(path.dirname(file), { recursive: true });
    // Written whole under a temporary name, then renamed: a crash leaves no half segment under its name.
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, body);
    await rename(tmp, file);
  }

  async get(key: string): Promise<Buffer | null> {
    checkKey(key);
    try {
      return await readFile(path.join(this.dir, key));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw e;
    }
  }

  async list(prefix: string): Promise<string[]> {
    checkKey(prefix, true);
    try {
      return (await readdir(path.join(this.dir, prefix))).filter((n) => !n.endsWith(".tmp")).map((n) => prefix + n).sort();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw e;
    }
  }

  locationOf(key: string): string {
    return `${this.url.replace(/\/+$/, "")}/${key}`;
  }
}

class S3Target implements ArchiveTarget {
  private readonly client: S3Client;

  constructor(
    readonly url: string,
    private readonly bucket: string,
    private readonly prefix: string,
    env: Record<string, string | undefined>,
  ) {
    const endpoint = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL;
    this.client = new S3Client({
      region: env.AWS_REGION || env.AWS_DEFAULT_REGION || "us-east-1",
      // Keys in the environment given (else the SDK's usual chain: profiles, instance roles, …).
      ...(env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
        ? { credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY, sessionToken: env.AWS_SESSION_TOKEN } }
        : {}),
      // A custom endpoint (MinIO, s3rver, …) is addressed by path: bucket names need no DNS there.
      ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
    });
  }

  private full(key: string): string {
    return this.prefix ? `${this.prefix}/${key}` : key;
  }

  async put(key: string, body: Buffer): Promise<void> {
    checkKey(key);
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.full(key), Body: body }));
  }

  async get(key: string): Promise<Buffer | null> {
    checkKey(key);
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.full(key) }));
      return Buffer.from(await out.Body!.transformToByteArray());
    } catch (e) {
      if ((e as { name?: string }).name === "NoSuchKey") return null;
      throw e;
    }
  }

  async list(prefix: string): Promise<string[]> {
    checkKey(prefix, true);
    const keys: string[] = [];
    let token: string | undefined;
    const strip = this.prefix ? this.prefix.length + 1 : 0;
    do {
      const out = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.full(prefix), ContinuationToken: token }));
      for (const o of out.Contents ?? []) if (o.Key) keys.push(o.Key.slice(strip));
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }

  locationOf(key: string): string {
    return `s3://${this.bucket}/${this.full(key)}`;
  }
}
