/**
 * pi-coding-agent's compaction and session-entry helpers: the pure ones (compaction-cut.ts,
 * compaction-context.ts) and the ones that call a model (compaction-summary.ts).
 */
import { contextExports } from "./compaction-context.ts";
import { cutExports } from "./compaction-cut.ts";
import { summaryExports } from "./compaction-summary.ts";

export const compactionExports: Record<string, unknown> = { ...contextExports, ...cutExports, ...summaryExports };
