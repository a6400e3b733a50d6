import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createInspector, toNodeListener } from "@contextblocks/inspector";
import type { NodeAgent } from "./agent.js";

export interface InspectorServer {
  /** The page, with the token in the fragment-free query the first visit needs: open it in a browser. */
  readonly url: string;
  readonly token: string;
  close(): Promise<void>;
}

/**
 * Mounts `@contextblocks/inspector` over the agent's session on `127.0.0.1` (never another interface): the
 * blocks, the frozen prompt and its hash, the conversation's tree with its compactions, search, and the
 * session's events live. Only with the token: an `Authorization: Bearer` header, or the
 * `contextblocks_inspector` cookie the first visit with `?token=` sets. Read-only.
 */
export async function startInspector(
  agent: NodeAgent,
  options: { port?: number; token?: string } = {},
): Promise<InspectorServer> {
  const token = options.token ?? randomBytes(18).toString("base64url");
  const inspector = createInspector({
    sessions: agent.session,
    title: "node-agent",
    basePath: "/inspector",
    authorize: (request) => {
      if (presents(request.headers.get("authorization"), `Bearer ${token}`)) return "read";
      const cookie = (request.headers.get("cookie") ?? "")
        .split(";")
        .map((part) => part.trim())
        .find((part) => part.startsWith("contextblocks_inspector="));
      if (cookie !== undefined && presents(cookie.slice("contextblocks_inspector=".length), token))
        return "read";
      const url = new URL(request.url);
      if (presents(url.searchParams.get("token"), token)) {
        // Trade the query token for a cookie (the event stream cannot send a header), then drop it from the URL.
        return new Response(null, {
          status: 303,
          headers: {
            location: url.pathname,
            "set-cookie": `contextblocks_inspector=${token}; Path=/inspector; HttpOnly; SameSite=Strict`,
          },
        });
      }
      return false;
    },
  });
  const server: Server = createServer(toNodeListener(inspector));
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/inspector/?token=${token}`,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function presents(given: string | null, expected: string): boolean {
  if (given === null) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
