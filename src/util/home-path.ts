import { homedir } from "node:os";
import { join } from "node:path";

/** `~` and a leading `~/` as the user's home folder; any other path unchanged. */
export const expandHome = (p: string): string => (p === "~" ? homedir() : p.startsWith("~/") ? join(homedir(), p.slice(2)) : p);
