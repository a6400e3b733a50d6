import { ContextBlocks } from "@contextblocks/core";
import { InMemoryContextProvider, InMemoryStore } from "@contextblocks/core/memory";
import { isWellFormed } from "@contextblocks/core/store-kit";
import { Session } from "@contextblocks/sessions";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { expect, it } from "vitest";
import { createInspector } from "../src/index.js";
import type { InspectorSnapshot } from "../src/snapshot.js";

// Where the page clips a text (a message's preview, an old version, an id), the cut never splits a
// surrogate pair: the snapshot's JSON stays well-formed (a strict parser refuses a lone "\ud83d"), and the
// page shows no U+FFFD where the emoji was.
it("clips messages, versions and ids without splitting an emoji", async () => {
  const store = new InMemoryStore();
  const context = new ContextBlocks([{ label: "memory", provider: new InMemoryContextProvider({ store }) }]);
  const session = new Session({ store: inMemoryBackend().messages("chat"), context });
  // Each cut falls between the two halves of 😀: at 280 (a preview), 600 (a version), 8 (an id).
  await session.appendMessage({
    id: "message😀-one",
    role: "user",
    parts: [{ type: "text", text: `${"a".repeat(279)}😀 and more` }],
  });
  await context.setBlock("memory", `${"b".repeat(599)}😀 first version`);
  await context.setBlock("memory", "second version");
  const inspector = createInspector({ sessions: session, authorize: () => "read" });

  const json = await (await inspector(new Request("http://agent.test/snapshot.json"))).text();
  expect(json).not.toMatch(/\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])/i);
  const snapshot = JSON.parse(json) as InspectorSnapshot;
  const [node] = snapshot.sessions[0]?.tree ?? [];
  expect(node?.text).toBe(`${"a".repeat(279)}…`);
  expect(isWellFormed(node?.text ?? "")).toBe(true);

  const html = await (await inspector(new Request("http://agent.test/"))).text();
  expect(html).not.toContain("\uFFFD");
  expect(html).toContain(`<pre>${"b".repeat(599)}…</pre>`);
  expect(html).toContain(">message</code>");
});
