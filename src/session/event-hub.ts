/**
 * The session's event fan-out. `emit` reaches every listener in order and returns the
 * last promise a listener gave back (stdout backpressure). `publish` is for records not
 * tied to an entry: written before the output's writer subscribed (extension load errors
 * at start-up), they wait for it.
 */
export class EventHub<E> {
  private listeners: ((e: E) => void | Promise<void>)[] = [];
  private backlog: E[] = [];
  private writing = false;

  /** `replay`: also receive what was published before (the output writer's subscription). */
  subscribe(fn: (e: E) => void | Promise<void>, opts: { replay?: boolean } = {}): void {
    this.listeners.push(fn);
    if (opts.replay) {
      this.writing = true;
      for (const e of this.backlog.splice(0)) void fn(e);
    }
  }

  publish(e: E): void | Promise<void> {
    if (!this.writing) {
      this.backlog.push(e);
      return;
    }
    return this.emit(e);
  }

  emit(e: E): void | Promise<void> {
    let wait: Promise<void> | undefined;
    for (const l of this.listeners) {
      const p = l(e);
      if (p) wait = p;
    }
    return wait;
  }
}
