/** Diagnostics go to stderr only, so a stray log can never corrupt a client's parser. */
export function log(scope: string, msg: string, data?: Record<string, unknown>): void {
  process.stderr.write(`pion ${scope}: ${msg}${data ? ` ${JSON.stringify(data)}` : ""}\n`);
}
