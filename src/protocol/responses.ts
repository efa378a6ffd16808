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
  command: string;
  success: false;
  error: string;
}

export function success(id: string | undefined, command: string, data: unknown): SuccessResponse {
  const r: SuccessResponse = id === undefined ? { type: "response", command, success: true } : { id, type: "response", command, success: true };
  if (data !== undefined) r.data = data;
  return r;
}

export function failure(id: string | undefined, command: string, error: string): FailureResponse {
  return id === undefined
    ? { type: "response", command, success: false, error }
    : { id, type: "response", command, success: false, error };
}
