declare namespace Cloudflare {
  interface Env {
    CONTEXT_OBJECT: DurableObjectNamespace<import("./worker.js").ContextTestObject>;
  }
}
