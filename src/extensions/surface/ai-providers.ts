/** (being written) */
export const aiProviderExports: Record<string, unknown> = {};
/** pi-ai/compat names beyond pi-ai (being written) */
export const aiCompatExports: Record<string, unknown> = {};
