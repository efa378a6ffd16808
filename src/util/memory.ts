/**
 * A full garbage collection every `every` ticks. A fast stream (100,000 deltas from a local
 * server in a third of a second) makes garbage faster than the collector's own schedule frees
 * it, and the process grows by tens of megabytes of it; a collection every few thousand events
 * (about 10 ms with a small heap) keeps the peak near what is live. At the pace a real provider
 * streams, tens of deltas a second, that is one collection a minute or two.
 */
export class PeriodicCollector {
  private count = 0;

  constructor(private readonly every: number) {}

  tick(): void {
    if (++this.count < this.every) return;
    this.count = 0;
    Bun.gc(true);
  }
}
