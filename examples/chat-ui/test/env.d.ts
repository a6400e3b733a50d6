import type { Env as WorkerEnv } from "../src/env.js";

declare global {
  namespace Cloudflare {
    // `env` of cloudflare:test and `exports` of cloudflare:workers, typed from the Worker.
    interface Env extends WorkerEnv {}
    interface GlobalProps {
      mainModule: typeof import("../src/index.js");
    }
  }
}
