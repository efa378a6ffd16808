import type { JsonPiece } from "../util/json-pieces.ts";

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

/**
 * Response data as JSON text, given in pieces that are produced while the response is written
 * (a session's every entry is never built as one string). Their concatenation is one JSON value.
 */
export class RawJson {
  constructor(readonly parts: Iterable<JsonPiece>) {}

  /** `head`, the pieces of `parts`, then `tail`. */
  static wrap(head: string, parts: Iterable<JsonPiece>, tail: string): RawJson {
    return new RawJson(
      (function* () {
        yield head;
        yield* parts;
        yield tail;
      })(),
    );
  }
}

/** The success line for data given as JSON text pieces, with the same key order as `success`. */
export function* successLine(id: string | undefined, command: string, data: RawJson): Generator<JsonPiece> {
  const head = id === undefined ? "" : `"id":${JSON.stringify(id)},`;
  yield `{${head}"type":"response","command":${JSON.stringify(command)},"success":true,"data":`;
  yield* data.parts;
  yield "}\n";
}

/**
 * Returned by a handler whose work outlives its turn in the command queue (the `bash`
 * command): the queue moves on, and the response is written when `result` settles.
 */
export class Background {
  constructor(readonly result: Promise<unknown>) {}
}
