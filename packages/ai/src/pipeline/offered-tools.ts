import { ContextError } from "@contextblocks/core";
import { describeValue } from "@contextblocks/core/store-kit";
import { asSchema, type ToolSet } from "ai";
import type { ModelToolDefinition } from "./model-types.js";

/** A tool a plugin offers on a call, and who offers it. */
export interface ToolOffer {
  sourceId: string;
  name: string;
  tool: ToolSet[string];
}

/**
 * Why `tools`, what a plugin offers (its `tools`, or `extendTools` in a call), is not an object of tools by
 * name, each an object; `null` when it is. Anything else (a number, an array) was read as no tools at all, or
 * failed later without naming the plugin.
 */
export function toolSetProblem(tools: unknown): string | null {
  if (typeof tools !== "object" || tools === null || Array.isArray(tools)) {
    return `the tools must be an object of tools by name, got ${describeValue(tools)}`;
  }
  for (const [name, tool] of Object.entries(tools)) {
    if (typeof tool !== "object" || tool === null)
      return `tool "${name}" is ${describeValue(tool)}, not a tool`;
  }
  return null;
}

/**
 * Merges the tools of several plugins into one `ToolSet`. The same tool object under one name is fine
 * (two plugins built on one context); two different tools under one name are a configuration error.
 */
export function mergeOfferedTools(offers: readonly ToolOffer[]): ToolSet {
  const merged: ToolSet = {};
  const owners = new Map<string, string>();
  for (const offer of offers) {
    const existing = merged[offer.name];
    if (existing !== undefined && existing !== offer.tool) {
      throw new ContextError(
        "INVALID_CONFIG",
        `Two tools are named "${offer.name}": plugins "${owners.get(offer.name)}" and "${offer.sourceId}" each offer one. Rename one of them.`,
      );
    }
    merged[offer.name] = offer.tool;
    owners.set(offer.name, offer.sourceId);
  }
  return merged;
}

const schemaJson = new WeakMap<object, Promise<string>>();

/** The JSON Schema of a tool's input as the SDK sends it, serialized; computed once per tool. */
function inputSchemaJson(tool: ToolSet[string]): Promise<string> {
  let json = schemaJson.get(tool);
  if (json === undefined) {
    json = Promise.resolve(asSchema(tool.inputSchema).jsonSchema).then((schema) => JSON.stringify(schema));
    schemaJson.set(tool, json);
  }
  return json;
}

/**
 * Checks that every offered tool is among the definitions the call carries (the SDK built them from the
 * `tools` it was given, and only those can run), with the same description and input schema. A missing or
 * different tool fails the call with an error naming the tool and the plugin: a definition the SDK cannot
 * run would only reach the model as an "unavailable tool" error.
 */
export async function checkOfferedTools(
  offers: readonly ToolOffer[],
  definitions: readonly ModelToolDefinition[] | undefined,
): Promise<void> {
  mergeOfferedTools(offers);
  const byName = new Map((definitions ?? []).map((definition) => [definition.name, definition]));
  for (const offer of offers) {
    const definition = byName.get(offer.name);
    if (definition === undefined) {
      throw new ContextError(
        "INVALID_CONFIG",
        `Tool "${offer.name}" (offered by plugin "${offer.sourceId}") is not among the tools given to generateText / streamText (or was left out by activeTools), so the AI SDK could not run it. Pass contextPipeline(…).tools (or the middleware's tools), spread with your own.`,
      );
    }
    if (definition.type !== "function" || offer.tool.type === "provider") continue;
    const same =
      definition.description === offer.tool.description &&
      JSON.stringify(definition.inputSchema) === (await inputSchemaJson(offer.tool));
    if (!same) {
      throw new ContextError(
        "INVALID_CONFIG",
        `Two tools are named "${offer.name}": the one given to generateText / streamText differs (description or input schema) from the one plugin "${offer.sourceId}" offers.`,
      );
    }
  }
}
