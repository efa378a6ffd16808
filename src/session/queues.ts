import type { AgentMessage } from "../store/entries.ts";

export type QueueMode = "all" | "one-at-a-time";

export interface Queued {
  text: string;
  message: AgentMessage;
  /** Id of the command that queued it, for its prompt_result. */
  requestId?: string;
}

/** The steering and follow-up queues; `onChange` fires whenever either changes. */
export class MessageQueues {
  steering: Queued[] = [];
  followUp: Queued[] = [];
  steeringMode: QueueMode = "one-at-a-time";
  followUpMode: QueueMode = "one-at-a-time";

  constructor(private onChange: () => void) {}

  get size(): number {
    return this.steering.length + this.followUp.length;
  }

  add(kind: "steering" | "followUp", item: Queued): void {
    this[kind].push(item);
    this.onChange();
  }

  take(kind: "steering" | "followUp"): Queued[] {
    const q = this[kind];
    if (q.length === 0) return [];
    const mode = kind === "steering" ? this.steeringMode : this.followUpMode;
    const taken = mode === "all" ? q.splice(0) : q.splice(0, 1);
    this.onChange();
    return taken;
  }

  /** Empty both queues; returns what was removed. */
  clear(): Queued[] {
    const removed = [...this.steering, ...this.followUp];
    this.steering = [];
    this.followUp = [];
    this.onChange();
    return removed;
  }

  /** Removes the message `requestId` queued; returns whether one was there. */
  remove(requestId: string): Queued | undefined {
    for (const kind of ["steering", "followUp"] as const) {
      const i = this[kind].findIndex((q) => q.requestId === requestId);
      if (i === -1) continue;
      const [removed] = this[kind].splice(i, 1);
      this.onChange();
      return removed;
    }
    return undefined;
  }

  snapshot(): { steering: string[]; followUp: string[] } {
    return { steering: this.steering.map((q) => q.text), followUp: this.followUp.map((q) => q.text) };
  }
}
