import type { RunState } from "@contextblocks/sessions/store-kit";
import type { ModelMessage, ToolSet } from "ai";
import { closeInterruptedToolCalls } from "./interrupted-tool-calls.js";
import type { RunMessage } from "./model-types.js";
import { type ToolOffer, toolSetProblem } from "./offered-tools.js";
import type { CallContext, ContextPlugin, MessageTransform } from "./plugin.js";
import { guard, invalidUse } from "./plugin-guard.js";
import { checkRunMessages, toRunMessage } from "./run-messages.js";

/** What every plugin's view of a call shares. */
export interface RunBasics {
  sessionId: string;
  inputMessages: readonly RunMessage[];
}

/**
 * What plugins contribute to one call in `beforeCall`, and the prompt made of it: the frozen prompt,
 * the caller's system messages, instructions, then context messages and the caller's, transformed.
 */
export class RunAssembly {
  /** Messages by source, in the order sources first added some (history included). */
  readonly contextMessages: Map<string, RunMessage[]> = new Map();
  /** Tools offered on this call (declared and extended), checked against the SDK's definitions. */
  readonly offers: ToolOffer[] = [];
  readonly #instructions: string[] = [];
  readonly #transforms: Array<{ plugin: ContextPlugin; transform: MessageTransform }> = [];
  #frozen: { sourceId: string; text: string } | undefined;

  /** The prompt starts with a frozen prompt (a plugin set a non-empty one). */
  get hasFrozenPrompt(): boolean {
    return (this.#frozen?.text.length ?? 0) > 0;
  }

  /** Adds messages under a source (a history plugin's loaded messages, a plugin's `extendMessages`). */
  addMessages(sourceId: string, messages: readonly (RunMessage | ModelMessage)[]): void {
    const list = this.contextMessages.get(sourceId) ?? [];
    list.push(...messages.map(toRunMessage));
    this.contextMessages.set(sourceId, list);
  }

  offerTools(sourceId: string, tools: ToolSet): void {
    for (const [name, tool] of Object.entries(tools)) this.offers.push({ sourceId, name, tool });
  }

  /** The run context a plugin sees in `beforeCall`: its own state, and methods that add to this call. */
  beforeView(plugin: ContextPlugin, basics: RunBasics, state: RunState): CallContext {
    return {
      ...basics,
      contextMessages: this.contextMessages,
      responseMessages: [],
      state,
      extendInstructions: (sourceId, text) => {
        checkSource(sourceId, "extendInstructions");
        if (typeof text !== "string") throw invalidUse(`extendInstructions("${sourceId}") needs text.`);
        if (text.length > 0) this.#instructions.push(text);
      },
      extendMessages: (sourceId, messages) => {
        checkSource(sourceId, "extendMessages");
        checkRunMessages(messages, `extendMessages("${sourceId}")`);
        this.addMessages(sourceId, messages);
      },
      extendTools: (sourceId, tools) => {
        checkSource(sourceId, "extendTools");
        const problem = toolSetProblem(tools);
        if (problem !== null) throw invalidUse(`extendTools("${sourceId}"): ${problem}.`);
        this.offerTools(sourceId, tools);
      },
      setFrozenPrompt: (sourceId, text) => {
        checkSource(sourceId, "setFrozenPrompt");
        if (typeof text !== "string") throw invalidUse(`setFrozenPrompt("${sourceId}") needs text.`);
        if (this.#frozen !== undefined && this.#frozen.sourceId !== sourceId) {
          throw invalidUse(
            `Two plugins set the frozen prompt ("${this.#frozen.sourceId}" and "${sourceId}"): a call has one cached prefix.`,
          );
        }
        this.#frozen = { sourceId, text };
      },
      transformMessages: (sourceId, transform) => {
        checkSource(sourceId, "transformMessages");
        if (typeof transform !== "function") {
          throw invalidUse(`transformMessages("${sourceId}") needs a function.`);
        }
        this.#transforms.push({ plugin, transform });
      },
    };
  }

  /** The prompt: frozen prompt, caller's system, instructions; context and caller messages, transformed. */
  async prompt(
    callerSystem: readonly RunMessage[],
    callerMessages: readonly RunMessage[],
  ): Promise<RunMessage[]> {
    let conversation: RunMessage[] = [...[...this.contextMessages.values()].flat(), ...callerMessages];
    for (const { plugin, transform } of this.#transforms) {
      const input = conversation;
      conversation = await guard(plugin, "transformMessages", async () => {
        const output = await transform(input);
        checkRunMessages(output, `transformMessages("${plugin.sourceId}")`);
        return output;
      });
    }
    const frozen = this.#frozen?.text ?? "";
    return [
      ...(frozen.length > 0 ? [{ role: "system" as const, content: frozen }] : []),
      ...callerSystem,
      ...this.#instructions.map((text) => ({ role: "system" as const, content: text })),
      ...closeInterruptedToolCalls(conversation),
    ];
  }
}

/** The run context a plugin sees in `afterCall`: the response is in; nothing can be added any more. */
export function afterView(
  basics: RunBasics,
  contextMessages: ReadonlyMap<string, readonly RunMessage[]>,
  responseMessages: readonly RunMessage[],
  state: RunState,
): CallContext {
  return {
    ...basics,
    contextMessages,
    responseMessages,
    state,
    extendInstructions: () => afterOnly("extendInstructions"),
    extendMessages: () => afterOnly("extendMessages"),
    extendTools: () => afterOnly("extendTools"),
    setFrozenPrompt: () => afterOnly("setFrozenPrompt"),
    transformMessages: () => afterOnly("transformMessages"),
  };
}

function checkSource(sourceId: unknown, method: string): void {
  if (typeof sourceId !== "string" || sourceId.length === 0) {
    throw invalidUse(`${method} needs the plugin's sourceId (a non-empty string) as its first argument.`);
  }
}

function afterOnly(method: string): never {
  throw invalidUse(`${method} only works in beforeCall: the model call is over.`);
}
