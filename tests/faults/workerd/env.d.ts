declare namespace Cloudflare {
  interface Env {
    FAULTS_OBJECT: DurableObjectNamespace<import("./worker.js").FaultsObject>;
    /** "short" (CI) or "long" (bench/src/faults.ts). */
    FAULTS_SCALE: string;
  }
}
