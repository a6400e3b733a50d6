import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";

/**
 * The root README's quick start, as a newcomer follows it: the files its blocks name (each block follows a
 * `<!-- quick-start: <path> -->` line) written into a new project outside the workspace, the packages its
 * install line names installed from the packed tarballs, `wrangler dev` started, and the three turns its
 * `curl` lines send answered as the README says.
 */

/** A file the quick start tells the reader to create. */
export interface QuickStartFile {
  path: string;
  content: string;
}

/** The files of the README's quick start, in order; a marked block without a fence is an error. */
export function quickStartFiles(readme: string): QuickStartFile[] {
  const lines = readme.split("\n");
  const files: QuickStartFile[] = [];
  for (let index = 0; index < lines.length; index++) {
    const marker = /^<!-- quick-start: (\S+) -->$/.exec(lines[index]?.trim() ?? "");
    if (marker === null) continue;
    // Only other HTML comments (the README checks' own markers) may stand between the marker and its fence.
    let open = index + 1;
    while (open < lines.length && /^<!--.*-->$/.test(lines[open]?.trim() ?? "")) open++;
    const fence = /^(`{3,})/.exec(lines[open] ?? "");
    if (fence === null)
      throw new Error(`README line ${index + 1}: a quick-start marker must sit right above a fence`);
    const end = lines.findIndex((line, at) => at > open && line.startsWith(fence[1] as string));
    if (end === -1) throw new Error(`README line ${open + 1}: the fence is never closed`);
    files.push({ path: marker[1] as string, content: `${lines.slice(open + 1, end).join("\n")}\n` });
    index = end;
  }
  return files;
}

/** One turn of the quick start: the path and message a `curl` line posts, and the answer shown under it. */
export interface QuickStartTurn {
  path: string;
  message: string;
  answer: string;
}

/** The `curl -X POST http://127.0.0.1:8787/<path> -d "<message>"` lines and the `# → <answer>` under each. */
export function quickStartTurns(readme: string): QuickStartTurn[] {
  const pattern = /curl -X POST http:\/\/127\.0\.0\.1:8787(\/\S*) -d "([^"]+)"\n# → ([^\n]+)/g;
  return [...readme.matchAll(pattern)].map((match) => ({
    path: match[1] as string,
    message: match[2] as string,
    answer: (match[3] as string).trim(),
  }));
}

/** Writes the quick start's files under `project`. */
export function writeQuickStart(project: string, files: readonly QuickStartFile[]): void {
  for (const file of files) {
    mkdirSync(dirname(join(project, file.path)), { recursive: true });
    writeFileSync(join(project, file.path), file.content);
  }
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/** Starts `wrangler dev` in `project` and resolves once it serves; the output so far travels with errors. */
export async function startWranglerDev(
  wrangler: string,
  project: string,
  port: number,
): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [wrangler, "dev", "--ip", "127.0.0.1", "--port", String(port)], {
    cwd: project,
    env: {
      ...process.env,
      WRANGLER_SEND_METRICS: "false",
      CI: "1",
      WRANGLER_LOG_PATH: join(project, "logs"),
    },
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited (${child.exitCode}):\n${output}`);
    try {
      await fetch(`http://127.0.0.1:${port}/`);
      return { child, output: () => output };
    } catch {
      if (Date.now() > deadline) {
        child.kill();
        throw new Error(`wrangler dev did not serve within 120 s:\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** The README of the repository, read once. */
export function rootReadme(root: string): string {
  return readFileSync(join(root, "README.md"), "utf8");
}
