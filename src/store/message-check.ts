/**
 * The SQL that confirms a message line read without a parse (quickMessage and keptAsBytes in jsonl-lines.ts): its
 * message, from byte `at` of the line to its closing brace, is one JSON value (RFC 8259, as JSON.parse
 * reads it, but for nesting over 1,000 deep, refused too). Written as it is inserted, or on the
 * import's check thread (import-check.ts) for a large file: one expression for both.
 */
export const messageIsJson = (line: string, at: string): string =>
  `json_valid(CAST(substr(${line}, ${at} + 1, length(${line}) - ${at} - 1) AS TEXT), 1)`;
