/**
 * What json-schema.ts loads on first use, in one module (one chunk of the binary): the validator
 * (@cfworker/json-schema), the loose-argument coercion (json-coerce.ts) and the wording of a
 * failed check (json-schema-issues.ts). A session whose tools are never called pays for none of it.
 */
export { Validator, validate, dereference } from "@cfworker/json-schema";
export { coerceToSchema, withoutUndefined } from "./json-coerce.ts";
export { issuesOf } from "./json-schema-issues.ts";
