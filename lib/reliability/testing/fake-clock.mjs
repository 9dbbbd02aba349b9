/**
 * A fake clock for the clock-fault harness (lib/reliability/clock.rtest.ts), preloaded into the
 * server with NODE_OPTIONS="--import <this file>": Date (now, and `new Date()` without
 * arguments) runs at the machine's time plus an offset in milliseconds that the harness writes
 * to RECONCILE_FAKE_CLOCK_FILE, read again every 20 ms — the server's clock jumps when the file
 * changes. The machine's clock is never touched; performance.now() (monotonic) is left as it is,
 * as a real clock jump leaves it.
 */
import { readFileSync } from "node:fs";

const file = process.env.RECONCILE_FAKE_CLOCK_FILE;
if (file) {
  const RealDate = Date;
  let offset = 0;
  const read = () => {
    try {
      offset = Number(readFileSync(file, "utf8").trim()) || 0;
    } catch {
      // kept
    }
  };
  read();
  setInterval(read, 20).unref();
  class FakeDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(RealDate.now() + offset);
      else super(...args);
    }
    static now() {
      return RealDate.now() + offset;
    }
  }
  // Own statics, not only inherited ones: a wrapper that copies Date's own properties (Next.js
  // wraps Date in its server) would otherwise lose parse and UTC.
  Object.defineProperty(FakeDate, "parse", { value: RealDate.parse, writable: true, configurable: true });
  Object.defineProperty(FakeDate, "UTC", { value: RealDate.UTC, writable: true, configurable: true });
  globalThis.Date = FakeDate;
}
