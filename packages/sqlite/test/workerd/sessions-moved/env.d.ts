declare namespace Cloudflare {
  interface Env {
    SESSION_OBJECT: DurableObjectNamespace<import("./worker.js").SessionTestObject>;
  }
}
