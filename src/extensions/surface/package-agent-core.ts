/**
 * pion's module for the reference's `pi-agent-core` (served by virtual-modules.ts, loaded with the first
 * import of it): its own names, completed with export-surface.ts's stand-ins.
 */
import { Agent } from "./agent.ts";
import { agentCoreExports } from "./agent-core.ts";
import { completeSurface } from "./export-surface.ts";

export const PACKAGES: Record<string, Record<string, unknown>> = { "pi-agent-core": completeSurface("pi-agent-core", { Agent, ...agentCoreExports }) };
