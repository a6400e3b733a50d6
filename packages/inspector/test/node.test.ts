import { EventEmitter } from "node:events";
import { createServer, type Server } from "node:http";
import { connect } from "node:net";
import { Writable } from "node:stream";
import { ContextBlocks } from "@contextblocks/core";
import { InMemoryContextProvider, InMemoryStore } from "@contextblocks/core/memory";
import { afterEach, describe, expect, it } from "vitest";
import { createInspector, RESTORE_HEADER, toNodeListener } from "../src/index.js";

type Handler = (request: Request) => Promise<Response>;

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function listen(handler: Handler, options?: Parameters<typeof toNodeListener>[1]): Promise<number> {
  const server = createServer(toNodeListener(handler, options));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** The inspector over one block with history, for tokens "reader" and "writer". */
function inspector(): { context: ContextBlocks; handler: Handler } {
  const store = new InMemoryStore();
  const context = new ContextBlocks([
    { label: "memory", maxTokens: 200, provider: new InMemoryContextProvider({ store }) },
  ]);
  const handler = createInspector({
    context,
    basePath: "/inspector",
    authorize: (request) => {
      const token = request.headers.get("authorization");
      return token === "Bearer writer" ? "write" : token === "Bearer reader" ? "read" : false;
    },
  });
  return { context, handler };
}

/**
 * Sends `head` (and then `body`, if any) on a raw socket and resolves with what the server sent, once it
 * sent a whole response head (`untilHead`) or closed the connection.
 */
function rawRequest(
  port: number,
  head: string,
  options: { body?: Buffer; untilHead?: boolean } = {},
): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    const done = () => {
      socket.destroy();
      resolve(received);
    };
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1");
      if (options.untilHead === true && received.includes("\r\n\r\n")) done();
    });
    socket.on("end", done);
    socket.on("close", done);
    // The server may answer and close before the client sent everything.
    socket.on("error", done);
    socket.write(head);
    if (options.body !== undefined) socket.write(options.body);
  });
}

const status = (response: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1]);

describe("toNodeListener: a bad request never ends the process", () => {
  it("answers 400 to a Host header that is not a host name, and keeps serving", async () => {
    const port = await listen(inspector().handler);
    for (const host of ["exa mple", "a/b", "a?b", "user@host", "[::1"]) {
      const response = await rawRequest(
        port,
        `GET /inspector/ HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
      );
      expect(status(response), host).toBe(400);
    }
    const refused = await rawRequest(
      port,
      "GET /inspector/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    );
    expect(status(refused)).toBe(401);
    const page = await rawRequest(
      port,
      "GET /inspector/ HTTP/1.1\r\nHost: [::1]:8080\r\nAuthorization: Bearer reader\r\nConnection: close\r\n\r\n",
    );
    expect(status(page)).toBe(200);
  });

  it("answers 500 when the handler throws or its response cannot be sent, and keeps serving", async () => {
    let calls = 0;
    const port = await listen(async () => {
      calls++;
      if (calls === 1) throw new Error("handler failed");
      // A header value the Fetch API takes and Node refuses to send.
      if (calls === 2) return new Response("x", { headers: { "x-bad": "a\u0001b" } });
      return new Response("fine");
    });
    const head = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    expect(status(await rawRequest(port, head))).toBe(500);
    expect(status(await rawRequest(port, head))).toBe(500);
    const fine = await rawRequest(port, head);
    expect(status(fine)).toBe(200);
    expect(fine).toContain("fine");
  });
});

describe("toNodeListener: the body is read after authorization, and bounded", () => {
  it("answers 401 before the body has been sent: authorize runs before any of it is read", async () => {
    const port = await listen(inspector().handler);
    // A body the client never finishes: a listener that waited for it would never answer.
    const response = await rawRequest(
      port,
      `POST /inspector/restore HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${512 * 1024}\r\n\r\n`,
      { body: Buffer.alloc(1024, 0x20), untilHead: true },
    );
    expect(status(response)).toBe(401);
  });

  it("refuses a declared body over maxBodyBytes with 413, without reading it", async () => {
    const port = await listen(inspector().handler);
    const response = await rawRequest(
      port,
      `POST /inspector/restore HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer writer\r\nContent-Length: ${160 * 1024 * 1024}\r\n\r\n`,
      { untilHead: true },
    );
    expect(status(response)).toBe(413);
  });

  it("fails a chunked body at maxBodyBytes, and delivers one under it whole", async () => {
    const port = await listen(
      async (request) => {
        try {
          const body = await request.text();
          return new Response(`read ${body.length}`);
        } catch (error) {
          return new Response(String(error), { status: 413 });
        }
      },
      { maxBodyBytes: 64 * 1024 },
    );
    const chunked = (size: number) => {
      const data = Buffer.alloc(size, 0x61);
      return Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), data, Buffer.from("\r\n0\r\n\r\n")]);
    };
    const head =
      "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
    const under = await rawRequest(port, head, { body: chunked(60 * 1024) });
    expect(status(under)).toBe(200);
    expect(under).toContain(`read ${60 * 1024}`);
    const over = await rawRequest(port, head, { body: chunked(200 * 1024) });
    expect(status(over)).toBe(413);
    expect(over).toMatch(/maxBodyBytes \(65536 bytes\)/);
  });

  it("restores a version through a Node server, with the body read after authorization", async () => {
    const { context, handler } = inspector();
    await context.setBlock("memory", "likes tea");
    await context.setBlock("memory", "likes coffee");
    const port = await listen(handler);
    const response = await fetch(`http://127.0.0.1:${port}/inspector/restore`, {
      method: "POST",
      headers: {
        authorization: "Bearer writer",
        "content-type": "application/json",
        [RESTORE_HEADER]: "restore",
      },
      body: JSON.stringify({ label: "memory", version: 1 }),
    });
    expect(response.status).toBe(200);
    expect(context.getBlock("memory")?.content).toBe("likes tea");
  });

  it("refuses maxBodyBytes that is not a positive integer", () => {
    for (const maxBodyBytes of [0, -1, 2.5, Number.NaN]) {
      expect(() => toNodeListener(async () => new Response(), { maxBodyBytes })).toThrow(/maxBodyBytes/);
    }
  });
});

describe("toNodeListener: write backpressure", () => {
  it("reads the next chunk of the response only when the connection has drained", async () => {
    let pulls = 0;
    const chunk = new Uint8Array(64 * 1024);
    const handler = async () =>
      new Response(
        new ReadableStream<Uint8Array>(
          {
            pull(controller) {
              pulls++;
              if (pulls > 100) controller.close();
              else controller.enqueue(chunk);
            },
          },
          { highWaterMark: 0 },
        ),
      );
    // A real Node writable that takes one chunk at a time: `write` returns false until it drains.
    const accepted: Array<() => void> = [];
    const response = Object.assign(
      new Writable({
        highWaterMark: 1,
        write(_chunk, _encoding, callback) {
          accepted.push(callback);
        },
      }),
      { writeHead: () => undefined, headersSent: false },
    );
    const request = Object.assign(new EventEmitter(), {
      method: "GET",
      url: "/",
      headers: { host: "127.0.0.1" },
      pause: () => undefined,
      resume: () => undefined,
    });
    toNodeListener(handler)(request, response);
    request.emit("end");
    const turns = async (count: number) => {
      for (let turn = 0; turn < count; turn++) await new Promise((resolve) => setImmediate(resolve));
    };
    await turns(20);
    expect(accepted).toHaveLength(1);
    expect(pulls).toBeLessThanOrEqual(2);
    // Each drain lets exactly one more chunk through.
    for (let drained = 1; drained <= 3; drained++) {
      accepted.shift()?.();
      await turns(20);
      expect(accepted).toHaveLength(1);
      expect(pulls).toBeLessThanOrEqual(drained + 2);
    }
    response.destroy();
  });
});
