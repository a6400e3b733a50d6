import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The example's folder (where wrangler.jsonc is). */
export const EXAMPLE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export interface WranglerDevOptions {
  /** Where the Durable Objects' SQLite files live; the same folder across restarts keeps the state. */
  persistTo: string;
  /** Extra `--var NAME:VALUE` bindings. The offline scripted model is forced unless `AGENT_MODEL` is given. */
  vars?: Record<string, string>;
  /** How long to wait for the first answer. Default 45 s. */
  startTimeoutMs?: number;
  /** The wrangler configuration file, relative to the example. Default `wrangler.jsonc`. */
  config?: string;
  /** Extra environment variables for wrangler (a Hyperdrive local connection string, say). */
  env?: Record<string, string>;
}

/** A running `wrangler dev` in its own process group. */
export interface WranglerDev {
  readonly url: string;
  readonly pid: number;
  /** Everything wrangler printed, for error messages. */
  output(): string;
  /** Stops the whole process group (wrangler and workerd); resolves when wrangler has exited. */
  stop(): Promise<void>;
}

const running = new Set<WranglerDev>();

/** `count` distinct TCP ports on 127.0.0.1 that were free a moment ago (held together, so never the same). */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Server>((resolveServer, reject) => {
          const server = createServer();
          server.unref();
          server.on("error", reject);
          server.listen(0, "127.0.0.1", () => resolveServer(server));
        }),
    ),
  );
  const ports = servers.map((server) => {
    const address = server.address();
    return typeof address === "object" && address ? address.port : 0;
  });
  await Promise.all(servers.map((server) => new Promise((resolveClose) => server.close(resolveClose))));
  return ports;
}

/**
 * Starts `wrangler dev --ip 127.0.0.1` on a free port, offline (no metrics, no update check, no error
 * reports), in a new process group so that stopping it also stops workerd, and waits until it answers.
 */
export async function startWranglerDev(options: WranglerDevOptions): Promise<WranglerDev> {
  // A port found free can be taken by another process before wrangler binds it: try fresh ports then.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      if (attempt >= 3 || !(error instanceof Error) || !/Address already in use/i.test(error.message))
        throw error;
    }
  }
}

async function startOnce(options: WranglerDevOptions): Promise<WranglerDev> {
  const require = createRequire(import.meta.url);
  const wranglerBin = join(dirname(require.resolve("wrangler/package.json")), "bin", "wrangler.js");
  const [port, inspectorPort] = await freePorts(2);
  const logDirectory = mkdtempSync(join(tmpdir(), "worker-agent-wrangler-logs-"));
  const vars = { AGENT_MODEL: "scripted", ...options.vars };
  const args = [
    wranglerBin,
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--inspector-port",
    String(inspectorPort),
    "--persist-to",
    options.persistTo,
    ...(options.config === undefined ? [] : ["--config", options.config]),
    "--show-interactive-dev-session=false",
    "--log-level",
    "warn",
    ...Object.entries(vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
  ];
  const child = spawn(process.execPath, args, {
    cwd: EXAMPLE_ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      ...options.env,
      WRANGLER_SEND_METRICS: "false",
      WRANGLER_SEND_ERROR_REPORTS: "false",
      WRANGLER_HIDE_BANNER: "true",
      WRANGLER_LOG_PATH: logDirectory,
      CLOUDFLARE_CF_FETCH_ENABLED: "false",
      NO_COLOR: "1",
      FORCE_COLOR: "0",
    },
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<void>((resolveExit) => child.once("exit", () => resolveExit()));
  const url = `http://127.0.0.1:${port}`;
  const pid = child.pid ?? 0;

  const dev: WranglerDev = {
    url,
    pid,
    output: () => output,
    stop: async () => {
      running.delete(dev);
      await stopGroup(child, exited);
      rmSync(logDirectory, { recursive: true, force: true });
    },
  };
  running.add(dev);

  try {
    await waitUntilAnswering(url, child, exited, options.startTimeoutMs ?? 45_000);
  } catch (error) {
    await dev.stop();
    throw new Error(
      `${error instanceof Error ? error.message : String(error)}\n--- wrangler output ---\n${output}`,
    );
  }
  return dev;
}

/** Stops every wrangler this process started (for exit and signal handlers). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((dev) => dev.stop()));
}

/** Synchronous last resort on process exit: SIGKILL every group still running. */
export function killAllNow(): void {
  for (const dev of running) signalGroup(dev.pid, "SIGKILL");
  running.clear();
}

async function waitUntilAnswering(
  url: string,
  child: ChildProcess,
  exited: Promise<void>,
  timeoutMs: number,
): Promise<void> {
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
  });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (hasExited) throw new Error(`wrangler dev exited early (code ${child.exitCode})`);
    try {
      const response = await fetch(`${url}/`, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await delay(150);
  }
  throw new Error(`wrangler dev did not answer on ${url} within ${timeoutMs} ms`);
}

async function stopGroup(child: ChildProcess, exited: Promise<void>): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  if (child.exitCode === null && child.signalCode === null) {
    signalGroup(pid, "SIGTERM");
    const stopped = await Promise.race([exited.then(() => true), delay(5_000).then(() => false)]);
    if (!stopped) {
      signalGroup(pid, "SIGKILL");
      await exited;
    }
  }
  // workerd may outlive wrangler for a moment; it is in the same group.
  signalGroup(pid, "SIGKILL");
  for (let attempt = 0; attempt < 50 && groupAlive(pid); attempt++) await delay(100);
}

/**
 * True while a process of the group is still running. On Linux, zombies (exited, not yet reaped by the
 * container's init) do not count; elsewhere any member counts.
 */
export function groupAlive(pgid: number): boolean {
  if (existsSync("/proc/self/stat")) {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      } catch {
        continue; // exited meanwhile
      }
      // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so read after the last ")".
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true;
    }
    return false;
  }
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone already.
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolveDelay) => setTimeout(resolveDelay, ms));
}
