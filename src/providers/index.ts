import { streamAnthropic } from "./anthropic.ts";
import { streamOpenAICompletions } from "./openai-completions.ts";
import { streamOpenAIResponses } from "./openai-responses.ts";
import { failedStream } from "./event-stream.ts";
import type { StreamFn } from "./types.ts";

/** Route a request to the adapter of its model's API. */
export const streamByApi: StreamFn = (req, signal) => {
  switch (req.model.api) {
    case "anthropic-messages":
      return streamAnthropic(req, signal);
    case "openai-completions":
      return streamOpenAICompletions(req, signal);
    case "openai-responses":
      return streamOpenAIResponses(req, signal);
    default:
      return failedStream(req, `API "${req.model.api}" is not implemented yet`);
  }
};
