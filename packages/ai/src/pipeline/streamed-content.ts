import type { ModelContent, ModelStreamPart } from "./model-types.js";

/**
 * Collects a model stream into the content a generate call would have returned, so a streamed response is
 * stored exactly like a generated one. Text and reasoning deltas join per id, in the order they started.
 */
export class StreamedContent {
  readonly #content: ModelContent[] = [];
  readonly #open = new Map<string, { type: "text" | "reasoning"; text: string }>();
  /** Set when the stream carried an error part: the response is incomplete. */
  failed = false;

  add(part: ModelStreamPart): void {
    switch (part.type) {
      case "text-start":
      case "reasoning-start":
        this.#start(part.type === "text-start" ? "text" : "reasoning", part.id);
        break;
      case "text-delta":
      case "reasoning-delta":
        this.#start(part.type === "text-delta" ? "text" : "reasoning", part.id).text += part.delta;
        break;
      case "text-end":
      case "reasoning-end":
        this.#open.delete(`${part.type.slice(0, part.type.indexOf("-"))}:${part.id}`);
        break;
      case "tool-call":
      case "tool-result":
      case "file":
        this.#content.push(part);
        break;
      case "error":
        this.failed = true;
        break;
      default:
        break;
    }
  }

  /** The content collected so far. */
  result(): ModelContent[] {
    return this.#content;
  }

  #start(type: "text" | "reasoning", id: string): { text: string } {
    const key = `${type}:${id}`;
    let entry = this.#open.get(key);
    if (entry === undefined) {
      entry = { type, text: "" };
      this.#open.set(key, entry);
      // The content entry and the open entry are the same object, so deltas land in place.
      this.#content.push(entry as ModelContent);
    }
    return entry;
  }
}
