declare namespace Cloudflare {
  interface Env {
    SEARCH_OBJECT: DurableObjectNamespace<import("./worker.js").SearchObject>;
    /** Sizes for the row-cost test, comma-separated; empty for the default (100 and 2,000). */
    FTS5_ROW_SIZES: string;
    /** "1" prints the row-cost table. */
    FTS5_PRINT_ROWS: string;
  }
}
