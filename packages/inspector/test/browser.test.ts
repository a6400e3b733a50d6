import { existsSync, mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sha256Hex } from "@contextblocks/core/store-kit";
import { postgresBackend } from "@contextblocks/postgres";
import {
  type SessionBackend,
  SessionBuilder,
  SessionManager,
  type SessionMessage,
} from "@contextblocks/sessions";
import { createCompactFunction } from "@contextblocks/sessions/compaction";
import { sqliteBackend } from "@contextblocks/sqlite";
import { startThrowawayCluster, type ThrowawayCluster } from "@contextblocks/test-kit/postgres";
import Database from "better-sqlite3";
import pg from "pg";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createInspector, toNodeListener } from "../src/index.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const IN_CI = process.env.CI === "true" || process.env.CI === "1";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
// A scratch folder, so a test run leaves the work tree clean; UPDATE_SCREENSHOTS=1 replaces the README's pictures.
const SCREENSHOTS =
  process.env.UPDATE_SCREENSHOTS === "1"
    ? join(import.meta.dirname, "..", "screenshots")
    : mkdtempSync(join(tmpdir(), "inspector-screenshots-"));
const TOKEN = "Bearer inspector-test-token";

if (!HAVE_CHROMIUM && !IN_CI) {
  console.warn(`\n[inspector browser test] SKIPPED: no Chromium at ${CHROMIUM} (set CHROMIUM_PATH).\n`);
}

const message = (id: string, role: string, text: string): SessionMessage => ({
  id,
  role,
  parts: [{ type: "text", text }],
});

interface Mounted {
  url: string;
  manager: SessionManager;
  sessionId: string;
  close(): Promise<void>;
}

/** Rewrites a stored message's content in place, as another client writing a bad shape would. */
type RewriteMessage = (id: string, content: string) => Promise<void>;

interface Opened {
  backend: SessionBackend;
  rewriteMessage: RewriteMessage;
}

/**
 * A manager on `backend` with a scripted conversation (a branch, a compaction) and a session the tree
 * cannot show (a message another client wrote in a bad shape), mounted on a Node server.
 */
async function mount({ backend, rewriteMessage }: Opened): Promise<Mounted> {
  const manager = new SessionManager(
    new SessionBuilder(backend)
      .withContext("soul", { provider: { get: async () => "You are a careful assistant." } })
      .withContext("memory", { description: "Facts about the user", maxTokens: 200 })
      .withCachedPrompt()
      .onCompaction(
        createCompactFunction({
          summarize: async () => "## Topic\nDeploy planning.\n\n## Key Points\nThe user deploys on Fridays.",
          protectHead: 1,
          minTailMessages: 2,
          tailTokenBudget: 0,
        }),
      ),
  );
  const info = await manager.create("Support chat");
  const session = manager.getSession(info.id);
  await session.context.setBlock("memory", "The user is Ada.");
  await session.context.freezeSystemPrompt();
  const turns = [
    message("u1", "user", "Hi, I'm Ada."),
    message("a1", "assistant", "Hello Ada."),
    message("u2", "user", "We deploy from main on Fridays after CI passes."),
    message("a2", "assistant", "Noted: Friday deploys from main."),
    message("u3", "user", "What about hotfixes?"),
    message("a3", "assistant", "Hotfixes go out any day."),
  ];
  for (const turn of turns) await manager.getSession(info.id).appendMessage(turn);
  // An edit of u3: a second branch beside the first.
  await manager.getSession(info.id).appendMessage(message("u3b", "user", "What about rollbacks?"), "a2");
  await manager
    .getSession(info.id)
    .appendMessage(message("a3b", "assistant", "Roll back with the previous tag."));
  await session.compact(); // refreshes the prompt
  await session.context.appendToBlock("memory", "Ada deploys on Fridays.");
  await manager.create("Empty chat");
  const broken = await manager.create("Broken <chat>");
  await manager.getSession(broken.id).appendMessage(message("broken-1", "user", "Soon unreadable."));
  // Searched once first, so SQLite's search index holds the message before it is rewritten: a message in a
  // bad shape the index has not taken in yet fails every later search there (a search error, not this test's).
  await manager.search("unreadable");
  await rewriteMessage("broken-1", JSON.stringify({ id: "broken-1", role: "user", parts: [null] }));

  const inspector = createInspector({
    sessions: manager,
    context: session.context,
    events: (listener) => manager.subscribe(listener),
    title: "Agent ada",
    basePath: "/inspector",
    authorize: (request) => (request.headers.get("authorization") === TOKEN ? "read" : false),
  });
  const server: Server = createServer(toNodeListener(inspector));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/inspector/`,
    manager,
    sessionId: info.id,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe.skipIf(!HAVE_CHROMIUM && !IN_CI)("the inspector in headless Chromium", () => {
  let browser: Browser | undefined;
  let cluster: ThrowawayCluster | undefined;
  let pool: pg.Pool | undefined;

  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await pool?.end();
    cluster?.stop();
  });

  const backends: Array<[string, () => Promise<Opened>]> = [
    [
      "SQLite (better-sqlite3)",
      async () => {
        const database = new Database(":memory:");
        return {
          backend: sqliteBackend(database),
          rewriteMessage: async (id, content) => {
            database.prepare("UPDATE assistant_messages SET content = ? WHERE id = ?").run(content, id);
          },
        };
      },
    ],
    [
      "Postgres (a throwaway cluster)",
      async () => {
        cluster = await startThrowawayCluster();
        const opened = new pg.Pool({ connectionString: cluster.connectionString });
        pool = opened;
        opened.on("error", () => undefined);
        return {
          backend: postgresBackend(opened),
          rewriteMessage: async (id, content) => {
            await opened.query("UPDATE assistant_messages SET content = $1 WHERE id = $2", [content, id]);
          },
        };
      },
    ],
  ];

  it.each(backends)(
    "on %s: blocks, the prompt hash, the tree with its overlay, search, live events, and the access check",
    async (name, open) => {
      if (!browser) throw new Error("not started");
      const mounted = await mount(await open());
      try {
        // Without the host's authorisation: nothing of the memory, on the page or its event stream.
        const stranger = await browser.newPage();
        const refused = await stranger.goto(mounted.url);
        expect(refused?.status()).toBe(401);
        await expect(stranger.content()).resolves.not.toContain("Ada");
        const events = await stranger.goto(`${mounted.url}events`);
        expect(events?.status()).toBe(401);
        await stranger.close();

        const page = await browser.newPage({
          viewport: { width: 1280, height: 900 },
          extraHTTPHeaders: { authorization: TOKEN },
        });
        const problems: string[] = [];
        page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
        page.on("console", (entry) => {
          if (entry.type() === "error") problems.push(`console error: ${entry.text()}`);
        });
        const response = await page.goto(mounted.url, { waitUntil: "load" });
        expect(response?.status()).toBe(200);
        await expect(page.title()).resolves.toBe("Agent ada · contextblocks inspector");

        // Blocks, and memory changed since the prompt was frozen.
        await expect(page.locator("li.block").count()).resolves.toBe(2);
        await expect(page.locator('li.block[data-label="memory"] .content').textContent()).resolves.toContain(
          "Ada deploys on Fridays.",
        );
        await expect(page.locator('li.block[data-label="memory"] .status').textContent()).resolves.toMatch(
          /Changed since the prompt was frozen/,
        );
        // The frozen prompt, with its SHA-256.
        const prompt = (await page.locator("pre.prompt").textContent()) ?? "";
        expect(prompt).toContain("The user is Ada.");
        expect(prompt).not.toContain("Fridays");
        await expect(page.locator("#prompt-hash").getAttribute("data-sha256")).resolves.toBe(
          await sha256Hex(prompt),
        );

        // The tree: every session, the branch, and the compaction overlay over the middle of the path; the
        // session that cannot be read shows its error, and the others render.
        await expect(page.locator("details.session-tree").count()).resolves.toBe(3);
        const broken = page.locator("details.session-broken");
        await expect(broken.count()).resolves.toBe(1);
        await expect(broken.locator("summary").textContent()).resolves.toContain("Broken <chat>");
        await broken.locator("summary").click();
        await expect(broken.locator(".session-error").textContent()).resolves.toMatch(
          /^This session could not be read: \S/,
        );
        await expect(broken.locator("li.node").count()).resolves.toBe(0);
        const tree = page.locator(`details.session-tree[data-session="${mounted.sessionId}"]`);
        await expect(tree.locator("li.node").count()).resolves.toBe(8);
        await expect(tree.locator("li.branch").count()).resolves.toBe(2);
        await expect(tree.locator("li.overlay").count()).resolves.toBe(1);
        await expect(tree.locator("li.overlay .summary").textContent()).resolves.toContain(
          "Deploy planning.",
        );
        expect(await tree.locator("li.node.compacted").count()).toBeGreaterThan(0);
        await expect(tree.locator('li.node[data-id="u1"]').getAttribute("class")).resolves.not.toContain(
          "compacted",
        );

        // Live: a write elsewhere appears on the open page, without a reload.
        await page.locator("#live-status", { hasText: "Connected" }).waitFor();
        await mounted.manager
          .getSession(mounted.sessionId)
          .context.appendToBlock("memory", "Ada prefers tea.");
        const live = page.locator('#live-events li[data-type="block-written"]');
        await live.waitFor();
        await expect(live.textContent()).resolves.toMatch(/memory · append · by appendToBlock/);

        const shot = name.startsWith("SQLite") ? "sqlite" : "postgres";
        await page.screenshot({ path: join(SCREENSHOTS, `inspector-${shot}.png`) });
        await tree.locator("summary").first().click();
        await tree.screenshot({ path: join(SCREENSHOTS, `tree-${shot}.png`) });

        // A message appears by id, role and size; its text is on the page only after a reload.
        await mounted.manager
          .getSession(mounted.sessionId)
          .appendMessage(message("u4", "user", "Ship the patch tonight."));
        const appended = page.locator('#live-events li[data-type="message-appended"]');
        await appended.waitFor();
        const line = (await appended.textContent()) ?? "";
        expect(line).toMatch(/message u4 \(user\) · \d+ B$/);
        expect(line).not.toContain("patch");

        // Search over the sessions' messages.
        await page.fill("#q", "hotfixes");
        await Promise.all([page.waitForLoadState("load"), page.click(".search-form button")]);
        await expect(page.locator(".search-results li").first().textContent()).resolves.toMatch(/hotfixes/i);
        expect(problems).toEqual([]);
        await page.close();
      } finally {
        await mounted.close();
      }
    },
  );
});
