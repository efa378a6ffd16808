/**
 * pion's module for the reference's `pi-tui` (served by virtual-modules.ts, loaded with the first
 * import of it): its own names, completed with export-surface.ts's stand-ins.
 */
import * as text from "../text-helpers.ts";
import { TUI_MODULE_STAND_INS } from "../tui-stand-ins.ts";
import { completeSurface } from "./export-surface.ts";

type Exports = Record<string, unknown>;

const tui: Exports = {
  visibleWidth: text.visibleWidth,
  truncateToWidth: text.truncateToWidth,
  wrapTextWithAnsi: text.wrapTextWithAnsi,
  fuzzyFilter: text.fuzzyFilter,
  fuzzyMatch: text.fuzzyMatch,
};

Object.assign(tui, TUI_MODULE_STAND_INS.tui);

export const PACKAGES: Record<string, Exports> = { "pi-tui": completeSurface("pi-tui", tui) };
