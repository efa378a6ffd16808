/** What the importing thread and the checking thread (import-check.ts) share. */

/** `verdict[0]`: where the check is; `verdict[1]`: the line that disagreed. */
export const CHECK_STATE = { pending: 0, running: 1, agreed: 2, disagreed: 3, failed: 4 } as const;

export interface CheckRequest {
  path: string;
  stopAt: number;
  /** Two Int32 slots (see CHECK_STATE). */
  verdict: SharedArrayBuffer;
}
