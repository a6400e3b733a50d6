/**
 * Starts a bench file as a local Worker (wrangler's `unstable_startWorker`, workerd, no persistence, a free
 * port) with one SQLite-backed Durable Object class, runs `use` against it, and disposes of it. The row-cost
 * benches use it: each file is both the Worker (its Durable Object and fetch handler) and the Node runner.
 */

export interface LocalWorker {
  fetch(url: string, init?: RequestInit): Promise<Response>;
}

export interface LocalWorkerOptions {
  /** The Worker's name, for wrangler's logs. */
  name: string;
  /** The file wrangler bundles as the Worker. */
  entrypoint: string;
  /** The Durable Object class the file exports, and the binding its fetch handler reads. */
  durableObject: { className: string; binding: string };
  /** Other bindings (an R2 bucket), as `unstable_startWorker` takes them. */
  bindings?: Record<string, { type: "r2_bucket"; bucket_name: string }>;
}

export async function withLocalWorker<Result>(
  options: LocalWorkerOptions,
  use: (worker: LocalWorker) => Promise<Result>,
): Promise<Result> {
  // A non-literal specifier keeps the bundler from pulling wrangler into the Worker.
  const wranglerSpecifier = "wrangler";
  const { unstable_startWorker } = (await import(wranglerSpecifier)) as typeof import("wrangler");
  const { className, binding } = options.durableObject;
  const worker = await unstable_startWorker({
    name: options.name,
    entrypoint: options.entrypoint,
    compatibilityDate: "2026-04-01",
    compatibilityFlags: ["nodejs_compat"],
    bindings: {
      [binding]: { type: "durable_object_namespace", class_name: className },
      ...options.bindings,
    },
    migrations: [{ tag: "v1", new_sqlite_classes: [className] }],
    dev: {
      server: { hostname: "127.0.0.1", port: 0 },
      inspector: false,
      persist: false,
      watch: false,
      logLevel: "warn",
    },
  });
  try {
    await worker.ready;
    return await use({
      fetch: (url, init) => worker.fetch(url, init as never) as unknown as Promise<Response>,
    });
  } finally {
    await worker.dispose();
  }
}
