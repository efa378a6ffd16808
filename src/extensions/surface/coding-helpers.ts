/**
 * pi-coding-agent's configuration, resource and tool helpers, each over pion's own mechanism:
 * settings (coding-settings.ts), models (coding-models.ts), trust and stored credentials (coding-trust.ts), skills and
 * context files (coding-resources.ts), diffs, image types, shell, event bus and visual-line truncation
 * (coding-tools.ts), image resizing and conversion (the read tool's own, src/tools/images/), the command
 * line (coding-cli.ts), a client of pion's RPC mode (coding-rpc-client.ts), model resolution as
 * `--model` / `--models` do it (coding-model-resolve.ts), the package manager (coding-packages.ts),
 * the PowerShell tool as it is off Windows (coding-powershell.ts), the paths of the shipped README
 * and docs (coding-config-paths.ts), extensions loaded and run outside a session (coding-runner.ts),
 * the built-in MCP / codemode / tool-search extension factories (coding-builtin-extensions.ts), and
 * the whole-program entry points (coding-entry.ts: `main` and `runRpcMode` as the errors they are
 * inside pion, `runPrintMode` over an in-process runtime).
 */
import { SettingsManager } from "./coding-settings.ts";
import { CredentialSynchronizationError, hasTrustRequiringProjectResources, ProjectTrustStore, readStoredCredential } from "./coding-trust.ts";
import { createSyntheticSourceInfo, formatSkillsForPrompt, loadProjectContextFiles, loadSkills, loadSkillsFromDir, parseSkillBlock } from "./coding-resources.ts";
import * as tools from "./coding-tools.ts";
import { convertToPng } from "../../tools/images/convert.ts";
import { formatDimensionNote, resizeImage } from "../../tools/images/resize.ts";
import { parseArgs } from "./coding-cli.ts";
import { ModelRegistry } from "./coding-models.ts";
import { RpcClient } from "./coding-rpc-client.ts";
import { modelResolveExports } from "./coding-model-resolve.ts";
import { codingPackages } from "./coding-packages.ts";
import { powerShellExports } from "./coding-powershell.ts";
import { configPathExports } from "./coding-config-paths.ts";
import { codingRunnerExports } from "./coding-runner.ts";
import { builtinExtensionExports } from "./coding-builtin-extensions.ts";
import { entryExports } from "./coding-entry.ts";

export const codingHelperExports: Record<string, unknown> = {
  SettingsManager,
  ModelRegistry,
  ProjectTrustStore,
  readStoredCredential,
  CredentialSynchronizationError,
  hasTrustRequiringProjectResources,
  loadSkills,
  loadSkillsFromDir,
  formatSkillsForPrompt,
  parseSkillBlock,
  loadProjectContextFiles,
  createSyntheticSourceInfo,
  generateDiffString: tools.generateDiffString,
  generateUnifiedPatch: tools.generateUnifiedPatch,
  detectSupportedImageMimeTypeFromFile: tools.detectSupportedImageMimeTypeFromFile,
  formatDimensionNote,
  resizeImage,
  convertToPng,
  getShellConfig: tools.getShellConfig,
  createEventBus: tools.createEventBus,
  wrapRegisteredTool: tools.wrapRegisteredTool,
  wrapRegisteredTools: tools.wrapRegisteredTools,
  truncateToVisualLines: tools.truncateToVisualLines,
  parseArgs,
  RpcClient,
  ...modelResolveExports,
  ...codingPackages,
  ...powerShellExports,
  ...configPathExports,
  ...codingRunnerExports,
  ...builtinExtensionExports,
  ...entryExports,
};
