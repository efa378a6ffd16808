/** JSON texts joined by commas, as pieces (the items of an array being written). */
export function* commaJoined(parts: Iterable<string>): Generator<string> {
  let first = true;
  for (const p of parts) {
    yield first ? p : `,${p}`;
    first = false;
  }
}
