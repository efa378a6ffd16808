import { statfsSync } from "node:fs";
import { dirname } from "node:path";

/** Less free space than this after a command means its output file may have been cut short. */
const LOW_BYTES = 64 * 1024;

/**
 * Why the command's output file (`path`) may not hold everything it printed: its disk is (nearly)
 * full after the run, so writes to it failed. Undefined when there is room, or when that cannot be told.
 */
export function outputNotSaved(path: string): string | undefined {
  try {
    const s = statfsSync(dirname(path));
    const free = Number(s.bavail) * Number(s.bsize);
    if (free >= LOW_BYTES) return undefined;
    return `The command's output could not be saved: the disk holding ${dirname(path)} is full (${free} bytes free); what is shown may be incomplete`;
  } catch {
    return undefined;
  }
}
