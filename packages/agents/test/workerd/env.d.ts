declare namespace Cloudflare {
  interface Env {
    AGENT_OBJECT: DurableObjectNamespace<import("./worker.js").AgentTestObject>;
  }
}
