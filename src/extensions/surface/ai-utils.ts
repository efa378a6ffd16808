/**
 * pi-ai's utility names (merged into pi-ai, pi-ai/compat and pi-ai/models): push streams, JSON
 * repair of tool arguments, overflow and retry classification, pricing, transcript helpers,
 * diagnostics, cache warming and session cleanups. The pieces live in ai-utils-*.ts; each is
 * small and does no work at import.
 */
import { cleanupSessionResources, registerSessionResourceCleanup } from "../../providers/session-resources.ts";
import * as errors from "./ai-utils-errors.ts";
import * as json from "./ai-utils-json.ts";
import * as models from "./ai-utils-models.ts";
import * as stream from "./ai-utils-stream.ts";
import { StreamingJsonParser, ToolCallArgumentsStream } from "./ai-utils-streaming-json.ts";
import * as transcript from "../../session/system-messages.ts";
import { validateToolArguments, validateToolCall } from "./ai-utils-validate.ts";

export const aiUtilExports: Record<string, unknown> = {
  EventStream: stream.EventStream,
  AssistantMessageEventStream: stream.AssistantMessageEventStream,
  createAssistantMessageEventStream: stream.createAssistantMessageEventStream,
  parseJsonWithRepair: json.parseJsonWithRepair,
  repairJson: json.repairJson,
  parseToolCallArguments: json.parseToolCallArguments,
  parseStreamingJson: json.parseStreamingJson,
  StreamingJsonParser,
  ToolCallArgumentsStream,
  isContextOverflow: errors.isContextOverflow,
  getOverflowPatterns: errors.getOverflowPatterns,
  isRecoverableLength: errors.isRecoverableLength,
  isRetryableAssistantError: errors.isRetryableAssistantError,
  retryDelayMs: errors.retryDelayMs,
  retryAssistantCall: errors.retryAssistantCall,
  formatThrownValue: errors.formatThrownValue,
  extractDiagnosticError: errors.extractDiagnosticError,
  createAssistantMessageDiagnostic: errors.createAssistantMessageDiagnostic,
  appendAssistantMessageDiagnostic: errors.appendAssistantMessageDiagnostic,
  calculateCost: models.calculateCost,
  modelsAreEqual: models.modelsAreEqual,
  getModelType: models.getModelType,
  isModelType: models.isModelType,
  hasApi: models.hasApi,
  getCacheWarmingDelayMs: models.getCacheWarmingDelayMs,
  getPromptCacheTtlMs: models.getPromptCacheTtlMs,
  isCacheWarmingReplayable: models.isCacheWarmingReplayable,
  getCacheWarmingRequestOptions: models.getCacheWarmingRequestOptions,
  evaluateCacheWarming: models.evaluateCacheWarming,
  registerSessionResourceCleanup,
  cleanupSessionResources,
  contentText: transcript.contentText,
  getSystemMessageText: transcript.getSystemMessageText,
  renderSystemMessageUpdate: transcript.renderSystemMessageUpdate,
  createInitialSystemMessage: transcript.createInitialSystemMessage,
  normalizeContext: transcript.normalizeContext,
  getInitialSystemMessage: transcript.getInitialSystemMessage,
  withoutInitialSystemMessage: transcript.withoutInitialSystemMessage,
  getCurrentTools: transcript.getCurrentTools,
  getCurrentSystemMessage: transcript.getCurrentSystemMessage,
  getCurrentSystemPrompt: transcript.getCurrentSystemPrompt,
  collapseSystemMessages: transcript.collapseSystemMessages,
  resolveTranscript: transcript.resolveTranscript,
  toToolDeclaration: transcript.toToolDeclaration,
  declarationsEqual: transcript.declarationsEqual,
  getToolStateChanges: transcript.getToolStateChanges,
  getDeclaredTools: transcript.getDeclaredTools,
  hasToolRedefinitions: transcript.hasToolRedefinitions,
  hasNonAdditiveToolChanges: transcript.hasNonAdditiveToolChanges,
  resolveTranscriptTools: transcript.resolveTranscriptTools,
  validateToolArguments,
  validateToolCall,
};
