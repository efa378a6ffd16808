/**
 * A piece of JSON text being written: a string, or its UTF-8 bytes as the store holds them (an
 * answer read from SQLite is passed on without being decoded and encoded again).
 */
export type JsonPiece = string | Uint8Array;

/** JSON texts joined by commas, as pieces (the items of an array being written). */
export function* commaJoined(parts: Iterable<JsonPiece>): Generator<JsonPiece> {
  let first = true;
  for (const p of parts) {
    if (first) yield p;
    else if (typeof p === "string") yield `,${p}`;
    else {
      yield ",";
      yield p;
    }
    first = false;
  }
}
