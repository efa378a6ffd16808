/** (being written) */
export const aiUtilExports: Record<string, unknown> = {};
