/** The spec's response records. `id` comes first and is omitted when the command had none. */
export interface SuccessResponse {
  id?: string;
  type: "response";
  command: string;
  success: true;
  data?: unknown;
}

export interface FailureResponse {
  id?: string;
  type: "response";
  /** Absent only when the record had no type to name. */
  command?: string;
  success: false;
  error: string;
}

export function success(id: string | undefined, command: string, data: unknown): SuccessResponse {
  const r: SuccessResponse = id === undefined ? { type: "response", command, success: true } : { id, type: "response", command, success: true };
  if (data !== undefined) r.data = data;
  return r;
}

export function failure(id: string | undefined, command: string | undefined, error: string): FailureResponse {
  const r: FailureResponse = id === undefined ? { type: "response" } as FailureResponse : ({ id, type: "response" } as FailureResponse);
  if (command !== undefined) r.command = command;
  r.success = false;
  r.error = error;
  return r;
}

/** Response data already serialized (large or deeply nested trees that JSON.stringify cannot take). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** The success line for data given as JSON text, with the same key order as `success`. */
export function successLine(id: string | undefined, command: string, data: RawJson): string {
  const head = id === undefined ? "" : `"id":${JSON.stringify(id)},`;
  return `{${head}"type":"response","command":${JSON.stringify(command)},"success":true,"data":${data.text}}\n`;
}

/**
 * Returned by a handler whose work outlives its turn in the command queue (the `bash`
 * command): the queue moves on, and the response is written when `result` settles.
 */
export class Background {
  constructor(readonly result: Promise<unknown>) {}
}
