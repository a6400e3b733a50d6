import { createOpenAI } from "@ai-sdk/openai";
import type { wrapLanguageModel } from "ai";
import { SCRIPTED_MODEL_ID, ScriptedModel } from "scripted-model";
import { LABELS } from "./agent-context.js";

/** The environment variables that pick the model (see the README). */
export interface ModelEnvironment {
  /** `"auto"` (default): OpenAI when `OPENAI_API_KEY` is set, else offline. `"scripted"`: always offline. */
  AGENT_MODEL?: string;
  /** Enables the real model. A secret: `.dev.vars` locally, `wrangler secret put OPENAI_API_KEY` deployed. */
  OPENAI_API_KEY?: string;
  /** The OpenAI model name. Default `gpt-4.1-mini`. */
  OPENAI_MODEL?: string;
  /** An OpenAI-compatible endpoint, optional. */
  OPENAI_BASE_URL?: string;
}

/** A model `contextPipeline` can wrap: an AI SDK provider's model, or the scripted one. */
export type AgentModel = Parameters<typeof wrapLanguageModel>[0]["model"];

export interface ChosenModel {
  model: AgentModel;
  /** `scripted-offline`, or `openai:<model name>`. */
  name: string;
  offline: boolean;
}

export const DEFAULT_OPENAI_MODEL = "gpt-4.1-mini";

export const OFFLINE_NOTE =
  "Offline scripted model: no OPENAI_API_KEY is set (or AGENT_MODEL=scripted), so replies come from a deterministic script that exercises the context tools. Set OPENAI_API_KEY for a real model.";

export function chooseModel(env: ModelEnvironment): ChosenModel {
  const key = env.OPENAI_API_KEY?.trim();
  if (env.AGENT_MODEL !== "scripted" && key) {
    const modelName = env.OPENAI_MODEL?.trim() || DEFAULT_OPENAI_MODEL;
    const baseURL = env.OPENAI_BASE_URL?.trim();
    const openai = createOpenAI({ apiKey: key, ...(baseURL ? { baseURL } : {}) });
    return { model: openai(modelName), name: `openai:${modelName}`, offline: false };
  }
  return {
    model: new ScriptedModel({
      memoryLabel: LABELS.memory,
      knowledgeLabel: LABELS.knowledge,
      environmentLabel: LABELS.environment,
      skillsLabel: LABELS.skills,
    }),
    name: SCRIPTED_MODEL_ID,
    offline: true,
  };
}
