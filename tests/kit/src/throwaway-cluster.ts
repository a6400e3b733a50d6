import { execFile, execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A running throwaway PostgreSQL cluster. */
export interface ThrowawayCluster {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
  /** A random password, required on TCP (SCRAM-SHA-256), as on a real server and as Hyperdrive requires. */
  readonly password: string;
  /** `postgresql://postgres:<password>@127.0.0.1:<port>/postgres`. */
  readonly connectionString: string;
  /**
   * Restarts the server on the same port and data (`pg_ctl restart`). `"immediate"` ends every backend at
   * once with no checkpoint, as a crash would (the start replays the WAL); `"fast"` (the default) rolls
   * back open transactions and checkpoints first. Connections are cut either way. Resolves once the server
   * accepts connections again; does not block the event loop meanwhile.
   */
  restart(mode?: "fast" | "immediate"): Promise<void>;
  /** Stops the server and deletes its directory. Safe to call twice. */
  stop(): void;
}

export interface ThrowawayClusterOptions {
  /** The directory holding `initdb` and `pg_ctl`. Default: `PG_BIN`, else the newest `/usr/lib/postgresql/<n>/bin`. */
  binaries?: string | undefined;
  /** Attempts on a fresh free port when the one picked was taken in between. Default 3. */
  attempts?: number | undefined;
}

/** The operating-system user that owns the cluster when we run as root (initdb refuses to run as root). */
const SERVER_USER = "postgres";

/**
 * Starts a PostgreSQL server for tests and benchmarks: `initdb` in a new temporary directory, then `pg_ctl
 * start` on a free port of 127.0.0.1 (picked now, so parallel runs do not collide), with durability off
 * (fsync, synchronous commit) because the data is thrown away. As root, both run as the `postgres` user.
 * TCP connections need the random password (SCRAM-SHA-256), which the connection string carries.
 * Throws an error that says what is missing and how to install it when the server cannot be started.
 */
export async function startThrowawayCluster(
  options: ThrowawayClusterOptions = {},
): Promise<ThrowawayCluster> {
  const binaries = options.binaries ?? process.env.PG_BIN ?? findBinaries();
  const attempts = options.attempts ?? 3;
  const asRoot = process.getuid?.() === 0;
  // Resolved before the directory exists, so a missing user leaves nothing behind.
  const owner = asRoot ? { user: userId(SERVER_USER), group: groupId(SERVER_USER) } : undefined;
  const directory = mkdtempSync(join(tmpdir(), "contextblocks-postgres-"));
  if (owner !== undefined) chownSync(directory, owner.user, owner.group);
  const data = join(directory, "data");
  const commandLine = (command: string, parameters: string[]): [string, string[]] => {
    const program = join(binaries, command);
    return asRoot ? ["runuser", ["-u", SERVER_USER, "--", program, ...parameters]] : [program, parameters];
  };
  const run = (command: string, parameters: string[]) => {
    const [file, argv] = commandLine(command, parameters);
    const result = spawnSync(file, argv, { encoding: "utf8", cwd: directory });
    return {
      ok: result.status === 0,
      output: `${result.stdout ?? ""}${result.stderr ?? ""}${result.error ?? ""}`,
    };
  };

  const remove = () => rmSync(directory, { recursive: true, force: true });
  const password = randomBytes(12).toString("hex");
  const passwordFile = join(directory, "password");
  writeFileSync(passwordFile, `${password}\n`);
  if (owner !== undefined) chownSync(passwordFile, owner.user, owner.group);
  const initialised = run("initdb", [
    "-D",
    data,
    "-U",
    SERVER_USER,
    `--pwfile=${passwordFile}`,
    "--auth-local=trust",
    "--auth-host=scram-sha-256",
    "--encoding=UTF8",
    "--locale=C",
    "--no-sync",
  ]);
  if (!initialised.ok) {
    remove();
    throw new Error(`throwaway cluster: initdb failed in ${data}:\n${initialised.output}`);
  }

  let lastOutput = "";
  for (let attempt = 0; attempt < attempts; attempt++) {
    const port = await freePort();
    const settings = [
      `-p ${port}`,
      `-k ${directory}`,
      "-c listen_addresses=127.0.0.1",
      "-c fsync=off",
      "-c synchronous_commit=off",
      "-c full_page_writes=off",
      "-c max_connections=1000", // test files run in parallel, each with its own clients and pools
    ].join(" ");
    const serverOptions = ["-D", data, "-l", join(directory, "server.log"), "-o", settings, "-w"];
    const started = run("pg_ctl", [...serverOptions, "start"]);
    if (started.ok) {
      let stopped = false;
      return {
        host: "127.0.0.1",
        port,
        user: SERVER_USER,
        database: "postgres",
        password,
        connectionString: `postgresql://${SERVER_USER}:${password}@127.0.0.1:${port}/postgres`,
        restart(mode = "fast") {
          if (stopped) return Promise.reject(new Error("throwaway cluster: restart() after stop()"));
          const [file, argv] = commandLine("pg_ctl", [...serverOptions, "-m", mode, "restart"]);
          return new Promise<void>((resolve, reject) => {
            execFile(file, argv, { cwd: directory, encoding: "utf8" }, (error, stdout, stderr) => {
              if (error === null) resolve();
              else reject(new Error(`throwaway cluster: pg_ctl restart failed:\n${stdout}${stderr}`));
            });
          });
        },
        stop() {
          if (stopped) return;
          stopped = true;
          run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
          remove();
        },
      };
    }
    lastOutput = started.output;
  }
  remove();
  throw new Error(
    `throwaway cluster: pg_ctl could not start the server after ${attempts} attempts:\n${lastOutput}`,
  );
}

/** The newest `/usr/lib/postgresql/<version>/bin` that has `initdb`. */
function findBinaries(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((name) => existsSync(join(root, name, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const newest = versions[0];
  if (newest === undefined) {
    throw new Error(
      "throwaway cluster: no PostgreSQL server binaries (initdb) under /usr/lib/postgresql. Install Debian's " +
        "postgresql package (scripts/setup.sh does as root) or set PG_BIN to the directory holding initdb and pg_ctl.",
    );
  }
  return join(root, newest, "bin");
}

function userId(name: string): number {
  return Number(idOf("-u", name));
}

function groupId(name: string): number {
  return Number(idOf("-g", name));
}

function idOf(flag: "-u" | "-g", name: string): string {
  try {
    return execFileSync("id", [flag, name], { encoding: "utf8" }).trim();
  } catch {
    throw new Error(
      `throwaway cluster: running as root, but there is no "${name}" user to run the server as (initdb refuses root). ` +
        "Debian's postgresql package creates it.",
    );
  }
}

/** A port the kernel just handed out on 127.0.0.1 (free now; a retry covers losing it before the server binds). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
