declare namespace Cloudflare {
  interface Env {
    ROW_COST_OBJECT: DurableObjectNamespace<import("./worker.js").RowCostObject>;
    /** Comma-separated entry counts for the search rows, e.g. "1000,10000" (set by vitest.rowcost.config.ts). */
    ROW_COST_ENTRIES: string;
  }
}
