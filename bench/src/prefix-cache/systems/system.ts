/** The shape every compared system has in the prefix-cache benchmark. */
import type { LanguageModelV3 } from "@ai-sdk/provider";
import type { ModelMessage, ToolSet } from "ai";

/** What changes under the blocks during the session (the environment block reads it). */
export interface SessionWorld {
  environment: string;
}

/** One turn's request, as handed to `generateText`. */
export interface TurnRequest {
  /** Absent when the model is wrapped in middleware that adds the system prompt itself. */
  system?: string;
  messages: ModelMessage[];
  tools: ToolSet;
}

export interface PromptSystem {
  readonly name: string;
  /** Wraps the benchmark's model (middleware systems); the requests are measured after the wrapping. */
  wrapModel?(model: LanguageModelV3): LanguageModelV3;
  /** The request for the next model call, from the transcript so far (ending with the user's message). */
  request(transcript: readonly ModelMessage[]): Promise<TurnRequest>;
  /** The host compacted the transcript: the cache is lost anyway, so this is the time to refresh. */
  compacted(): Promise<void>;
  close(): void;
}
