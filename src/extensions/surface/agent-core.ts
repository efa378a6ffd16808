/** (being written) */
export const agentCoreExports: Record<string, unknown> = {};
