import { log } from "../../util/log.ts";
import type { Model } from "../types.ts";
import { replacementFor } from "./choose.ts";

const told = new Set<string>();

/** One stderr line per process and model: a deprecated model still runs, and says what replaces it. */
export function noticeDeprecated(model: Model, siblings: readonly Model[]): void {
  if (model.status !== "deprecated") return;
  const key = `${model.provider}/${model.id}`;
  if (told.has(key)) return;
  told.add(key);
  const next = replacementFor(siblings, model);
  log("models", `${key} is deprecated${next ? `; a current model of its family: ${model.provider}/${next.id}` : ""}`);
}

/** One stderr line for an id the catalog does not list: which limits it borrowed. */
export function noticeUnlisted(model: Model, template: Model | undefined): void {
  const key = `${model.provider}/${model.id}`;
  log(
    "models",
    `${key} is not in the model catalog; using ${template ? `the limits of ${model.provider}/${template.id}` : "the provider's defaults"} (refresh it with: pion models refresh)`,
  );
}
