/** (being written) */
export const agentSessionExports: Record<string, unknown> = {};
