/**
 * A one-line description of a failed request: the SDKs' API errors already read
 * "<status> <provider body or message>"; network failures keep their cause.
 */
export function describeProviderError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  const causeMsg = cause instanceof Error && cause.message && !err.message.includes(cause.message) ? `: ${cause.message}` : "";
  return `${err.message || err.name}${causeMsg}`;
}

/** HTTP status of an SDK error, if it has one. */
export function errorStatus(err: unknown): number | undefined {
  const s = (err as { status?: unknown } | null)?.status;
  return typeof s === "number" ? s : undefined;
}

/**
 * describeProviderError, plus the endpoint when the request never reached it (the SDKs'
 * "Connection error." names no server).
 */
export function describeRequestError(err: unknown, baseUrl: string): string {
  const text = describeProviderError(err);
  const unreached = errorStatus(err) === undefined && /connection error|ECONNREFUSED|unable to connect|fetch failed/i.test(text);
  return unreached && baseUrl && !text.includes(baseUrl) ? `${text} (${baseUrl})` : text;
}
