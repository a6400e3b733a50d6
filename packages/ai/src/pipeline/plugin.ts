import type { RunState } from "@contextblocks/sessions/store-kit";
import type { ModelMessage, ToolSet } from "ai";
import type { RunMessage } from "./model-types.js";

/** Rewrites the conversation (context messages, then the caller's messages) before the model sees it. */
export type MessageTransform = (messages: RunMessage[]) => RunMessage[] | Promise<RunMessage[]>;

/**
 * What a plugin sees around one model call (one `doGenerate` / `doStream`: a step of the SDK's tool loop
 * is a call of its own). Each plugin gets its own view: `state` is its own.
 */
export interface CallContext {
  /** The session the call belongs to (the middleware's `sessionId`, or the call's plugin option). */
  readonly sessionId: string;
  /**
   * The messages this call brings that no earlier call of the session already stored: the caller's new
   * messages on a first step; on a continuation of the SDK's tool loop, the tool results since the last step.
   */
  readonly inputMessages: readonly RunMessage[];
  /** Messages added by plugins so far (history included), by `sourceId`, in plugin order. */
  readonly contextMessages: ReadonlyMap<string, readonly RunMessage[]>;
  /** The model's response as messages. Empty in `beforeCall`. */
  readonly responseMessages: readonly RunMessage[];
  /**
   * This plugin's state for the session: change it in place. It is saved (as JSON, through the
   * `RunStateStore`) only when the whole call succeeded, together with every other plugin's state.
   */
  readonly state: RunState;
  /** Instructions for this call: a system message after the frozen prompt and the caller's `system`. */
  extendInstructions(sourceId: string, text: string): void;
  /**
   * Messages for this call, placed before the caller's messages, after those of earlier plugins.
   * `ModelMessage`s with string content are accepted.
   */
  extendMessages(sourceId: string, messages: readonly (RunMessage | ModelMessage)[]): void;
  /**
   * Tools this call must offer. The AI SDK runs tools from the `tools` given to `generateText` /
   * `streamText`, never from the model call, so each tool must be among them (pass `contextPipeline`'s
   * `tools`): the middleware checks that it is, with the same definition, and fails the call naming the tool
   * and the plugin otherwise. It never sends a definition the SDK could not run.
   */
  extendTools(sourceId: string, tools: ToolSet): void;
  /**
   * The frozen system prompt: the first system message, before the caller's `system` and every instruction,
   * so the cached prefix never moves. One plugin per call may set it.
   */
  setFrozenPrompt(sourceId: string, text: string): void;
  /**
   * Rewrites the conversation the model sees (context messages and the caller's, not the system messages),
   * after every `beforeCall`, in plugin order. What is stored is never rewritten: a reminder placed here
   * reaches the model and stays out of the history.
   */
  transformMessages(sourceId: string, transform: MessageTransform): void;
}

/**
 * A plugin that runs around every model call (a context plugin of Microsoft Agent Framework). `beforeCall` adds
 * instructions, messages or tools; `afterCall` reads the input and the response and updates `state`.
 * Both may be async; a throw fails the call with an error naming the plugin, and nothing is stored.
 */
export interface ContextPlugin {
  /** Unique within a pipeline; names the plugin in errors and keys its state. */
  readonly sourceId: string;
  /**
   * Tools the plugin offers on every call. They go into `contextPipeline(…).tools`, the `ToolSet` to give
   * `generateText` / `streamText` (which is what executes them), and each call checks they are there.
   */
  readonly tools?: ToolSet;
  beforeCall?(run: CallContext): void | Promise<void>;
  afterCall?(run: CallContext): void | Promise<void>;
}
