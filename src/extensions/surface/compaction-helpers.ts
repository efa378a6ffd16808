/** (being written) */
export const compactionExports: Record<string, unknown> = {};
