// biome-ignore lint: records are arbitrary JSON
export type Rec = Record<string, any>;

/** Records read from pion's stdout, with waiters for the first one matching a predicate. */
export class RecordLog {
  readonly records: Rec[] = [];
  private waiters: { pred: (r: Rec) => boolean; from: number; resolve: (r: Rec) => void }[] = [];

  /** `context` adds to a timeout's message (e.g. pion's stderr). */
  constructor(private context: () => string = () => "") {}

  add(rec: Rec): void {
    this.records.push(rec);
    const idx = this.records.length - 1;
    this.waiters = this.waiters.filter((w) => {
      if (idx >= w.from && w.pred(rec)) {
        w.resolve(rec);
        return false;
      }
      return true;
    });
  }

  /** The first record (at index >= from) matching `pred`, waiting for it if needed. */
  waitFor(pred: string | ((r: Rec) => boolean), from = 0, timeoutMs = 15000): Promise<Rec> {
    const test = typeof pred === "string" ? (r: Rec) => r.type === pred : pred;
    for (let i = from; i < this.records.length; i++) if (test(this.records[i]!)) return Promise.resolve(this.records[i]!);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const types = JSON.stringify(this.records.slice(-30).map((r) => r.type));
        reject(new Error(`timed out waiting for ${typeof pred === "string" ? pred : "record"}; last: ${types}\n${this.context()}`));
      }, timeoutMs);
      this.waiters.push({
        pred: test,
        from,
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
      });
    });
  }
}
