declare namespace Cloudflare {
  interface Env {
    SESSIONS_OBJECT: DurableObjectNamespace<import("./worker.js").SessionsTestObject>;
    AGENT_OBJECT: DurableObjectNamespace<import("./worker.js").AgentTestObject>;
  }
}
