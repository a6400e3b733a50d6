/** The parts of `node:http`'s `IncomingMessage` the adapter reads (no import of `node:http`). */
export interface NodeRequestLike {
  method?: string | undefined;
  url?: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  on(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  on(event: "end" | "close", listener: () => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
}

/** The parts of `node:http`'s `ServerResponse` the adapter writes. */
export interface NodeResponseLike {
  writeHead(status: number, headers: Record<string, string>): unknown;
  write(chunk: Uint8Array): unknown;
  end(chunk?: string): unknown;
  on(event: "close", listener: () => void): unknown;
}

/**
 * A `node:http` request listener over a Fetch API handler (`createInspector(…)`): `http.createServer(
 * toNodeListener(inspector))`, or call it from an Express or Fastify route. Streams the response (the
 * event stream stays open until the client leaves).
 */
export function toNodeListener(
  handler: (request: Request) => Promise<Response>,
): (request: NodeRequestLike, response: NodeResponseLike) => void {
  return (incoming, outgoing) => {
    const chunks: Uint8Array[] = [];
    incoming.on("data", (chunk) => chunks.push(chunk));
    incoming.on("error", () => outgoing.end());
    incoming.on("end", () => {
      const abort = new AbortController();
      outgoing.on("close", () => abort.abort());
      const headers = new Headers();
      for (const [name, value] of Object.entries(incoming.headers)) {
        if (Array.isArray(value)) for (const item of value) headers.append(name, item);
        else if (value !== undefined) headers.set(name, value);
      }
      const method = incoming.method ?? "GET";
      const body = method === "GET" || method === "HEAD" || chunks.length === 0 ? undefined : concat(chunks);
      const request = new Request(
        new URL(incoming.url ?? "/", `http://${headers.get("host") ?? "localhost"}`),
        {
          method,
          headers,
          ...(body !== undefined ? { body } : {}),
          signal: abort.signal,
        },
      );
      void handler(request).then(async (response) => {
        const out: Record<string, string> = {};
        response.headers.forEach((value, name) => {
          out[name] = value;
        });
        outgoing.writeHead(response.status, out);
        if (response.body === null || method === "HEAD") {
          outgoing.end();
          return;
        }
        const reader = response.body.getReader();
        abort.signal.addEventListener("abort", () => void reader.cancel().catch(() => undefined));
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            outgoing.write(value);
          }
        } catch {
          // The client left.
        }
        outgoing.end();
      });
    });
  };
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const total = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}
