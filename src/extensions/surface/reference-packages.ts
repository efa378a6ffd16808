/** The reference's packages and the subpaths extensions import (`pi-ai/compat` is pi-ai's whole provider layer). */
export const REFERENCE_PACKAGES = ["pi-coding-agent", "pi-ai", "pi-ai/compat", "pi-ai/models", "pi-agent-core", "pi-tui"] as const;
export type ReferencePackage = (typeof REFERENCE_PACKAGES)[number];
