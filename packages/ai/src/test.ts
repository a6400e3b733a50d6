/**
 * Test helpers (`@contextblocks/ai/test`): compare the cached prefix of two requests, and a scripted
 * tool-calling model that reports usage as a provider does.
 */
export {
  assertStablePrefix,
  type ComparePrefixOptions,
  comparePrefix,
  describePrefixComparison,
  type PrefixComparison,
  type PrefixSnapshot,
  type PrefixSource,
  prefixSnapshot,
} from "./prefix.js";
export {
  type ScriptedCall,
  type ScriptedGenerateResult,
  ScriptedLanguageModel,
  type ScriptedModelOptions,
  type ScriptedStep,
  type ScriptedStreamPart,
  type ScriptedToolCall,
  type ScriptedUsage,
  scriptedModel,
} from "./scripted-model.js";
