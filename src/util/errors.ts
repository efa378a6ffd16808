/** An error whose message is meant for the client; `code` is the machine-readable kind. */
export class PionError extends Error {
  constructor(
    message: string,
    readonly code: string = "failed",
  ) {
    super(message);
  }
}

export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));
