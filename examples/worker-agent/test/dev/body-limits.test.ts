import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWranglerDev, type WranglerDev } from "../../scripts/wrangler-dev.js";
import { MAX_BODY_BYTES } from "../../src/http.js";

/** What came back: a status and body, or the socket error the client saw instead. */
type Outcome = { status: number; body: string } | { error: string };

/**
 * POSTs `size` bytes of JSON-looking text, chunked (no content-length) or with a content-length, the way a
 * client that streams an upload would, and reads whatever answer arrives.
 */
function upload(url: string, path: string, size: number, framing: "chunked" | "length"): Promise<Outcome> {
  return new Promise((resolve) => {
    const target = new URL(path, url);
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (framing === "chunked") headers["transfer-encoding"] = "chunked";
    else headers["content-length"] = String(size);
    const outgoing = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        headers,
        agent: false,
      },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (text: string) => {
          body += text;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
        response.on("error", (error) => resolve({ error: String(error) }));
      },
    );
    outgoing.on("error", (error) => resolve({ error: String(error) }));
    const piece = Buffer.alloc(16 * 1024, "a");
    let sent = 0;
    const pump = () => {
      while (sent < size) {
        const part = piece.subarray(0, Math.min(piece.length, size - sent));
        sent += part.length;
        if (!outgoing.write(part)) {
          outgoing.once("drain", pump);
          return;
        }
      }
      outgoing.end();
    };
    pump();
  });
}

const tooLarge = {
  status: 413,
  body: `${JSON.stringify({ error: `The body is larger than ${MAX_BODY_BYTES} bytes` }, null, 2)}\n`,
};

// Issue 12, item 10: cancelling an over-limit request body under wrangler dev reset the upload and made the
// next request, to another agent, fail with 503 "worker restarted mid-request".
describe("over-limit bodies under wrangler dev", () => {
  let persistTo = "";
  let dev: WranglerDev | undefined;

  beforeAll(async () => {
    persistTo = mkdtempSync(join(tmpdir(), "worker-agent-body-limits-"));
    dev = await startWranglerDev({ persistTo });
  });

  afterAll(async () => {
    await dev?.stop();
    if (persistTo) rmSync(persistTo, { recursive: true, force: true });
  });

  async function chatWorks(agent: string): Promise<void> {
    const response = await fetch(`${dev?.url}/agents/${agent}/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "hello" }),
    });
    const text = await response.text();
    expect(response.status, text).toBe(200);
  }

  it("a chunked body over the limit gets a readable 413, and the next request to another agent works", async () => {
    for (let round = 0; round < 3; round++) {
      expect(
        await upload(dev?.url ?? "", `/agents/over-${round}/chat`, MAX_BODY_BYTES * 3, "chunked"),
      ).toEqual(tooLarge);
      await chatWorks(`after-${round}`);
    }
  });

  it("a 10 MB chunked body gets a readable 413, not a connection reset", async () => {
    expect(await upload(dev?.url ?? "", "/agents/huge/chat", 10 * 1024 * 1024, "chunked")).toEqual(tooLarge);
    await chatWorks("after-huge");
  });

  it("a 10 MB body with a content-length gets a readable 413 too", async () => {
    expect(await upload(dev?.url ?? "", "/agents/huge-length/chat", 10 * 1024 * 1024, "length")).toEqual(
      tooLarge,
    );
    await chatWorks("after-huge-length");
  });
});
