import { route } from "./router.js";

export { AgentObject } from "./agent-object.js";
export { SharedBlockObject } from "./shared-block.js";

/** The Worker: checks each request and hands it to the agent's Durable Object (one per agent id). */
export default {
  fetch(request, env): Promise<Response> {
    return route(request, env.AGENT);
  },
} satisfies ExportedHandler<Env>;
