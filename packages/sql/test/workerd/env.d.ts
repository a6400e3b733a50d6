declare namespace Cloudflare {
  interface Env {
    SQL_OBJECT: DurableObjectNamespace<import("./worker.js").SqlTestObject>;
  }
}
