import type { ChatObject } from "./chat-object.js";

/** The Worker's bindings (wrangler.jsonc), and the secret a real model needs. */
export interface Env {
  CHATS: DurableObjectNamespace<ChatObject>;
  OPENAI_MODEL: string;
  OPENAI_API_KEY?: string;
}
