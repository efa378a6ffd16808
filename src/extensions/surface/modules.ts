/**
 * Every one of pion's modules for the reference's packages at once (the generated list and the
 * tests read them all; an extension loads only the packages it imports, see virtual-modules.ts).
 */
import { REFERENCE_PACKAGES, type ReferencePackage } from "./reference-packages.ts";
import { PACKAGES as AGENT_CORE } from "./package-agent-core.ts";
import { PACKAGES as AI } from "./package-ai.ts";
import { PACKAGES as CODING_AGENT } from "./package-coding-agent.ts";
import { PACKAGES as TUI } from "./package-tui.ts";

type Exports = Record<string, unknown>;

const ALL: Record<string, Exports> = { ...CODING_AGENT, ...AI, ...AGENT_CORE, ...TUI };

export const surfaceOf = (pkg: ReferencePackage): Exports => ALL[pkg]!;

/** Every module completed (the generated list is checked against these). */
export const referenceModules = (): Record<ReferencePackage, Exports> =>
  Object.fromEntries(REFERENCE_PACKAGES.map((pkg) => [pkg, surfaceOf(pkg)])) as Record<ReferencePackage, Exports>;
