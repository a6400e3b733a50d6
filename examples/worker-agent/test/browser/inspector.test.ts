import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedSkills } from "../../scripts/seed-skills.js";
import { EXAMPLE_ROOT, startWranglerDev, type WranglerDev } from "../../scripts/wrangler-dev.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const IN_CI = process.env.CI === "true" || process.env.CI === "1";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const AGENT = "browser-check";
// Screenshots go to a scratch folder (printed), so a test run leaves the work tree clean; with
// UPDATE_SCREENSHOTS=1 they replace the committed pictures the README shows.
const SCREENSHOTS =
  process.env.UPDATE_SCREENSHOTS === "1" ? EXAMPLE_ROOT : mkdtempSync(join(tmpdir(), "inspector-shots-"));
const SCREENSHOT = join(SCREENSHOTS, "inspector.png");
const LIVE_SCREENSHOT = join(SCREENSHOTS, "inspector-live.png");
const INSPECTOR_TOKEN = "browser-test-token";

if (!HAVE_CHROMIUM && !IN_CI) {
  console.warn(
    `\n[inspector browser test] SKIPPED: no Chromium at ${CHROMIUM}. Install it with \`apt-get install -y chromium\` (or set CHROMIUM_PATH). In CI (CI=true) a missing Chromium fails instead.\n`,
  );
}

describe.skipIf(!HAVE_CHROMIUM && !IN_CI)("the inspector page in headless Chromium", () => {
  let persistTo = "";
  let dev: WranglerDev | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    if (!HAVE_CHROMIUM) throw new Error(`CI=true and no Chromium at ${CHROMIUM}: install it (setup.sh does)`);
    persistTo = mkdtempSync(join(tmpdir(), "worker-agent-browser-"));
    await seedSkills(persistTo);
    // A fixed date makes the page, and so the screenshot, the same from day to day.
    dev = await startWranglerDev({
      persistTo,
      vars: { AGENT_DATE: "2031-01-01", INSPECTOR_TOKEN: INSPECTOR_TOKEN },
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
  });

  afterAll(async () => {
    console.info(`[inspector browser test] screenshots in ${SCREENSHOTS}`);
    await browser?.close();
    await dev?.stop();
    if (persistTo) rmSync(persistTo, { recursive: true, force: true });
  });

  async function post(path: string, body: unknown, method = "POST"): Promise<void> {
    const response = await fetch(`${dev?.url}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  }

  /** A page that presents the inspector token (as a cookie), as the agent's owner would. */
  async function ownerPage(): Promise<Page> {
    if (!browser || !dev) throw new Error("not started");
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    await context.addCookies([{ name: "contextblocks_inspector", value: INSPECTOR_TOKEN, url: dev.url }]);
    return context.newPage();
  }

  it("loads, shows every block with its usage bar, the prompt and the reminder, with no console errors", async () => {
    if (!browser || !dev) throw new Error("not started");
    // Give the page something to show: a memory write, a question, and a changed date (a reminder).
    await post(`/agents/${AGENT}/chat`, { message: "Remember that I prefer TypeScript and short answers." });
    await post(`/agents/${AGENT}/chat`, {
      message: "Remember that I deploy from the main branch on Fridays, after the tests pass in CI.",
    });
    await post(`/agents/${AGENT}/chat`, { message: "How do I run the tests?" });
    await post(`/agents/${AGENT}/chat`, { message: "Load the code-review skill." });
    await post(`/agents/${AGENT}/date`, { date: "2031-01-02" }, "PUT");

    const page: Page = await ownerPage();
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error" || message.type() === "warning")
        problems.push(`console ${message.type()}: ${message.text()}`);
    });
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("requestfailed", (failed) => problems.push(`request failed: ${failed.url()}`));
    page.on("response", (response) => {
      if (response.status() >= 400) problems.push(`HTTP ${response.status()}: ${response.url()}`);
    });

    // /agents/:id redirects to the mounted @contextblocks/inspector.
    const response = await page.goto(`${dev.url}/agents/${AGENT}`, { waitUntil: "load" });
    expect(response?.status()).toBe(200);
    expect(page.url()).toBe(`${dev.url}/agents/${AGENT}/inspector/`);
    await expect(page.title()).resolves.toBe(`Agent ${AGENT} · contextblocks inspector`);

    const expected = [
      { label: "soul", marker: "[readonly]" },
      { label: "memory", marker: "[writable]" },
      { label: "knowledge", marker: "[searchable]" },
      { label: "skills", marker: "[loadable]" },
      { label: "environment", marker: "[readonly]" },
      { label: "profile", marker: "[writable]" },
    ];
    const blocks = page.locator("li.block");
    await expect(blocks.count()).resolves.toBe(expected.length);
    for (const { label, marker } of expected) {
      const block = page.locator(`li.block[data-label="${label}"]`);
      await expect(block.getByRole("heading", { name: label.toUpperCase() }).isVisible()).resolves.toBe(true);
      await expect(block.locator(".marker").textContent()).resolves.toBe(marker);
      const bar = block.locator(".usage .bar");
      await expect(bar.isVisible()).resolves.toBe(true);
      const box = await bar.boundingBox();
      expect(box?.width ?? 0).toBeGreaterThan(50);
      await expect(block.locator(".usage-text").textContent()).resolves.toMatch(/tokens/);
    }

    // The memory block has a limit: a real meter, filled in proportion.
    const meter = page.getByRole("meter", { name: "memory usage" });
    await expect(meter.getAttribute("aria-valuemax")).resolves.toBe("600");
    const used = Number(await meter.getAttribute("aria-valuenow"));
    expect(used).toBeGreaterThan(0);
    const fill = await meter.locator("span").boundingBox();
    const track = await meter.boundingBox();
    expect(fill?.width ?? 0).toBeGreaterThan(0);
    expect((fill?.width ?? 0) / (track?.width ?? 1)).toBeCloseTo(used / 600, 1);
    await expect(page.locator('li.block[data-label="memory"] .status').textContent()).resolves.toMatch(
      /Changed since the prompt was frozen/,
    );

    // The skills block lists what R2 holds and shows what the conversation loaded.
    await expect(page.locator('li.block[data-label="skills"] pre.content').textContent()).resolves.toContain(
      "- code-review: Checklist for reviewing a pull request",
    );
    await expect(page.getByRole("heading", { name: "Frozen system prompt" }).isVisible()).resolves.toBe(true);
    await expect(page.locator("pre.prompt").textContent()).resolves.toContain("SOUL [readonly]");
    await expect(page.locator("pre.reminder").textContent()).resolves.toContain("Today is 2031-01-02.");
    await page.screenshot({ path: SCREENSHOT, fullPage: false });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("shows the conversations, the message tree with its branches and a compaction overlay", async () => {
    if (!browser || !dev) throw new Error("not started");
    const send = async (path: string, body: unknown) => {
      const response = await fetch(`${dev?.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
      return (await response.json()) as { userMessageId: string; compaction: unknown };
    };
    const agent = "browser-tree";
    await send(`/agents/${agent}/chat`, { message: "Remember that I like tea." });
    const question = await send(`/agents/${agent}/chat`, { message: "How do I run the tests?" });
    await send(`/agents/${agent}/edit`, {
      messageId: question.userMessageId,
      message: "Where does the data live?",
    });
    let compacted = false;
    for (let index = 0; index < 40 && !compacted; index++) {
      const turn = await send(`/agents/${agent}/chat`, {
        message: `Remember that note ${index} is about ${"frozen prompts and caches, ".repeat(6)}`,
      });
      compacted = turn.compaction !== null;
    }
    expect(compacted).toBe(true);

    const page: Page = await ownerPage();
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error" || message.type() === "warning") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(error.message));
    const response = await page.goto(`${dev.url}/agents/${agent}`, { waitUntil: "load" });
    expect(response?.status()).toBe(200);
    await expect(page.locator("details.session-tree").count()).resolves.toBe(1);
    const tree = page.locator("details.session-tree[open] .tree");
    await expect(tree.isVisible()).resolves.toBe(true);
    const branches = tree.locator("ol.branches > li.branch");
    await expect(branches.count()).resolves.toBe(2);
    await expect(branches.nth(1).locator(".branch-label").textContent()).resolves.toBe(
      "Branch 2 of 2 · active",
    );
    await expect(branches.nth(0).locator("li.node.off-path").count()).resolves.toBeGreaterThan(0);
    await expect(tree.locator("li.node.on-path").count()).resolves.toBeGreaterThan(10);
    await expect(tree.locator("li.node.compacted").count()).resolves.toBeGreaterThan(0);
    const overlay = page.locator("li.overlay pre.summary");
    await expect(overlay.isVisible()).resolves.toBe(true);
    await expect(overlay.textContent()).resolves.toContain("## Key Points");
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("refuses a streamed body over the limit (no content-length) with 413 and a JSON error", async () => {
    if (!dev) throw new Error("not started");
    const url = new URL(`${dev.url}/agents/${AGENT}/chat`);
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const outgoing = request(
        url,
        { method: "POST", headers: { "content-type": "application/json", "transfer-encoding": "chunked" } },
        (incoming) => {
          let text = "";
          incoming.setEncoding("utf8");
          incoming.on("data", (chunk: string) => {
            text += chunk;
          });
          incoming.on("end", () => resolve({ status: incoming.statusCode ?? 0, body: text }));
        },
      );
      outgoing.on("error", reject);
      const chunk = " ".repeat(16 * 1024);
      for (let sent = 0; sent < 256 * 1024; sent += chunk.length) outgoing.write(chunk);
      outgoing.end();
    });
    expect(status).toBe(413);
    expect(JSON.parse(body)).toEqual({ error: "The body is larger than 65536 bytes" });
  });

  it("shows search results as wide as the page allows at common widths (phone, tablet, desktop)", async () => {
    if (!browser || !dev) throw new Error("not started");
    const agent = "search-check";
    await post(`/agents/${agent}/chat`, {
      message: "Remember that I deploy hotfixes on Fridays, after the tests pass in CI.",
    });
    for (const width of [390, 768, 1280]) {
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      await context.addCookies([{ name: "contextblocks_inspector", value: INSPECTOR_TOKEN, url: dev.url }]);
      const page = await context.newPage();
      const response = await page.goto(`${dev.url}/agents/${agent}/inspector/?q=hotfixes`, {
        waitUntil: "load",
      });
      expect(response?.status()).toBe(200);
      const hit = page.locator(".search-results li").first();
      await expect(hit.textContent()).resolves.toMatch(/hotfixes/i);
      // The text of a result takes most of the section's width (it was a column a few characters wide).
      const text = await hit.locator("pre").boundingBox();
      const section = await page.locator('section[aria-labelledby="search-heading"]').boundingBox();
      expect(text?.width ?? 0).toBeGreaterThan((section?.width ?? 0) * (width < 640 ? 0.9 : 0.75));
      // Nothing wider than the screen: no sideways scrolling.
      const overflow = Number(
        await page.evaluate("document.documentElement.scrollWidth - window.innerWidth"),
      );
      expect(overflow).toBeLessThanOrEqual(0);
      await page.locator('section[aria-labelledby="search-heading"]').screenshot({
        path: join(SCREENSHOTS, `inspector-search-${width}.png`),
      });
      await context.close();
    }
  });

  it("mounts @contextblocks/inspector: refused without the token, and with it streams the agent's events live", async () => {
    if (!browser || !dev) throw new Error("not started");
    const agent = "live-check";
    await post(`/agents/${agent}/chat`, { message: "Remember that I prefer TypeScript." });
    const url = `${dev.url}/agents/${agent}/inspector/`;
    // A browser without the cookie is sent to the login form; the JSON stays a plain 401.
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    expect((await page.goto(url))?.status()).toBe(200);
    expect(page.url()).toBe(`${dev.url}/agents/${agent}/inspector/login`);
    await expect(page.content()).resolves.not.toContain("TypeScript");
    expect((await fetch(`${url}snapshot.json`)).status).toBe(401);
    // A wrong token: refused, still on the form, no cookie.
    await page.getByLabel("Inspector token").fill("not-the-token");
    const refused = page.waitForResponse((response) => response.url().endsWith("/login"));
    await page.getByRole("button", { name: "Open the inspector" }).click();
    expect((await refused).status()).toBe(401);
    await expect(page.getByRole("alert").textContent()).resolves.toMatch(/not the inspector token/);
    await expect(context.cookies()).resolves.toEqual([]);
    // The token: an HttpOnly, SameSite=Strict cookie for the inspector's path, and the page.
    await page.getByLabel("Inspector token").fill(INSPECTOR_TOKEN);
    await Promise.all([
      page.waitForURL(url),
      page.getByRole("button", { name: "Open the inspector" }).click(),
    ]);
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({
      name: "contextblocks_inspector",
      path: `/agents/${agent}/inspector`,
      httpOnly: true,
      sameSite: "Strict",
    });
    await expect(page.locator('li.block[data-label="memory"] .content').textContent()).resolves.toContain(
      "TypeScript",
    );
    await page.locator("#live-status", { hasText: "Connected" }).waitFor();
    // A turn in another client: its tool write, then the conversation's events reach the open page.
    await post(`/agents/${agent}/chat`, { message: "Remember that I deploy from main on Fridays." });
    const write = page.locator('#live-events li[data-type="block-written"]');
    await write.first().waitFor();
    await expect(write.first().textContent()).resolves.toMatch(/memory · .* · by set_context/);
    await page.screenshot({ path: LIVE_SCREENSHOT });
    expect(problems).toEqual([]);
    await context.close();
  });
});
