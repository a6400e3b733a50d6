import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** A running `wrangler dev` for the test Worker. */
export interface WranglerDev {
  readonly url: string;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `wrangler dev` on free ports of 127.0.0.1 for the Worker in `directory`, with the Hyperdrive binding
 * `HYPERDRIVE` pointed at `connectionString` (wrangler 4's `CLOUDFLARE_HYPERDRIVE_LOCAL_CONNECTION_STRING_<BINDING>`),
 * offline, in its own process group, and waits until `GET /` answers.
 */
export async function startWranglerDev(directory: string, connectionString: string): Promise<WranglerDev> {
  const require = createRequire(import.meta.url);
  const wrangler = join(dirname(require.resolve("wrangler/package.json")), "bin", "wrangler.js");
  const [port, inspectorPort] = await freePorts(2);
  const state = mkdtempSync(join(tmpdir(), "contextblocks-postgres-wrangler-"));
  const child = spawn(
    process.execPath,
    [
      wrangler,
      "dev",
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspectorPort),
      "--persist-to",
      state,
      "--show-interactive-dev-session=false",
      "--log-level",
      "warn",
    ],
    {
      cwd: directory,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        CLOUDFLARE_HYPERDRIVE_LOCAL_CONNECTION_STRING_HYPERDRIVE: connectionString,
        WRANGLER_SEND_METRICS: "false",
        WRANGLER_SEND_ERROR_REPORTS: "false",
        WRANGLER_HIDE_BANNER: "true",
        WRANGLER_LOG_PATH: state,
        CLOUDFLARE_CF_FETCH_ENABLED: "false",
        NO_COLOR: "1",
      },
    },
  );
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await stopGroup(child, exited);
    rmSync(state, { recursive: true, force: true });
  };
  try {
    await waitUntilAnswering(url, child, 60_000);
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n--- wrangler output ---\n${output}`);
  }
  return { url, output: () => output, stop };
}

async function waitUntilAnswering(url: string, child: ChildProcess, timeout: number): Promise<void> {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited early (code ${child.exitCode})`);
    try {
      const response = await fetch(`${url}/`, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`wrangler dev did not answer on ${url} within ${timeout} ms`);
}

/** SIGTERM to wrangler's whole group (workerd included), SIGKILL when it lingers. */
async function stopGroup(child: ChildProcess, exited: Promise<void>): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-pid, name);
    } catch {
      // The group is gone.
    }
  };
  if (child.exitCode === null && child.signalCode === null) {
    signal("SIGTERM");
    const stopped = await Promise.race([
      exited.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000)),
    ]);
    if (!stopped) signal("SIGKILL");
  }
  signal("SIGKILL");
}

/** `count` distinct ports of 127.0.0.1 that were free a moment ago. */
function freePorts(count: number): Promise<number[]> {
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<number>((resolve, reject) => {
          const server = createServer();
          server.once("error", reject);
          server.listen(0, "127.0.0.1", () => {
            const address = server.address();
            const port = typeof address === "object" && address !== null ? address.port : 0;
            // Held until all are picked would be safer; closing at once keeps it simple, retried by the caller.
            server.close(() => resolve(port));
          });
        }),
    ),
  );
}
