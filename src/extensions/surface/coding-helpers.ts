/** (being written) */
export const codingHelperExports: Record<string, unknown> = {};
