/**
 * A TCP proxy between the app and PostgreSQL that a harness can break on purpose (issue 35's
 * network faults), plain node:net:
 *
 * - `cut()`: every connection is destroyed at once and new ones are refused (the listener
 *   closes), as when the network or the database host goes away;
 * - `blackhole()`: connections are accepted and kept, and nothing is forwarded either way (a
 *   partition: packets vanish, nobody says so). What was held is sent on `heal()`, as TCP's
 *   retransmissions would, unless the connection was closed meanwhile;
 * - `delay(ms)`: every chunk, both ways, leaves `ms` after it arrived (a database that stalls);
 * - `heal()`: forwards again, listening on the same port.
 */
import net from "node:net";

type Pipe = { from: net.Socket; to: net.Socket; queue: { at: number; chunk: Buffer }[]; timer: NodeJS.Timeout | null };

export class FaultProxy {
  private server: net.Server | null = null;
  private readonly pairs = new Set<{ client: net.Socket; upstream: net.Socket; pipes: Pipe[] }>();
  private holding = false;
  private delayMs = 0;
  /** Connections accepted so far (the pool reconnecting shows here). */
  accepted = 0;

  private constructor(
    private readonly target: { host: string; port: number },
    public port: number,
  ) {}

  /** A proxy in front of the PostgreSQL server `url` names. */
  static async start(url: string): Promise<FaultProxy> {
    const u = new URL(url);
    const proxy = new FaultProxy({ host: u.hostname || "127.0.0.1", port: Number(u.port || 5432) }, 0);
    await proxy.listen();
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  via(url: string): string {
    const u = new URL(url);
    u.hostname = "127.0.0.1";
    u.port = String(this.port);
    return u.toString();
  }

  get mode(): string {
    return !this.server ? "cut" : this.holding ? "blackhole" : this.delayMs ? `delay ${this.delayMs} ms` : "pass";
  }

  private async listen(): Promise<void> {
    const server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  private accept(client: net.Socket) {
    this.accepted++;
    const upstream = net.connect(this.target.port, this.target.host);
    const pipes: Pipe[] = [
      { from: client, to: upstream, queue: [], timer: null },
      { from: upstream, to: client, queue: [], timer: null },
    ];
    const pair = { client, upstream, pipes };
    this.pairs.add(pair);
    const close = () => {
      if (!this.pairs.delete(pair)) return;
      for (const p of pipes) if (p.timer) clearTimeout(p.timer);
      client.destroy();
      upstream.destroy();
    };
    for (const p of pipes) {
      p.from.on("data", (chunk: Buffer) => {
        p.queue.push({ at: Date.now() + this.delayMs, chunk });
        this.pump(p);
      });
      // Either side closing or failing closes both (a half-close is not a state PostgreSQL uses).
      p.from.on("end", close);
      p.from.on("error", close);
      p.from.on("close", close);
    }
  }

  /** Sends what is due on one direction, in order; a later chunk never overtakes an earlier one. */
  private pump(p: Pipe) {
    if (p.timer || this.holding) return;
    while (p.queue.length) {
      const wait = p.queue[0].at - Date.now();
      if (wait > 0) {
        p.timer = setTimeout(() => {
          p.timer = null;
          this.pump(p);
        }, wait);
        return;
      }
      if (!p.to.destroyed) p.to.write(p.queue.shift()!.chunk);
      else p.queue.shift();
    }
  }

  /** Destroys every connection and refuses new ones until heal(). */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const pair of [...this.pairs]) {
      pair.client.destroy();
      pair.upstream.destroy();
    }
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Keeps every connection, and accepts new ones, but forwards nothing until heal(). */
  blackhole(): void {
    this.holding = true;
  }

  /** Every chunk from now on leaves `ms` after it arrived. */
  delay(ms: number): void {
    this.delayMs = ms;
  }

  /** Forwards again (what a black hole held goes now), without delay, listening if cut. */
  async heal(): Promise<void> {
    this.holding = false;
    this.delayMs = 0;
    for (const pair of this.pairs) for (const p of pair.pipes) {
      for (const q of p.queue) q.at = 0;
      if (p.timer) clearTimeout(p.timer);
      p.timer = null;
      this.pump(p);
    }
    if (!this.server) await this.listen();
  }

  /** Connections open now. */
  get open(): number {
    return this.pairs.size;
  }

  async close(): Promise<void> {
    await this.cut();
  }
}
