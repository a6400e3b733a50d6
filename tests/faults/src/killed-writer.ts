import { type ChildProcess, fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { MessageTree } from "@contextblocks/sessions/store-kit";
import { SqliteSessionStore } from "@contextblocks/sqlite";
import type { NewSessionLayout } from "@contextblocks/sqlite/store-kit";
import Database from "better-sqlite3";
import { batchScript } from "./batches.js";
import { compiledProcess } from "./compiled-processes.js";
import { type FaultFigures, FaultTally } from "./figures.js";
import { checkTranscript, type TranscriptFindings } from "./transcript-check.js";
import { turnScript } from "./turns.js";
import type { CrashPoint, WriterMessage, WriterMode, WriterOptions } from "./writer-protocol.js";
import type { WriterScript } from "./writer-script.js";

/** Options of `killedWriter`. */
export interface KilledWriterOptions {
  mode: WriterMode;
  layout: NewSessionLayout;
  journalMode: "wal" | "delete";
  /** How many writer processes to kill. */
  kills: number;
  /** Kills on one database file before the next starts afresh (each check reads the whole path). Default 20. */
  killsPerDatabase?: number;
  /** The longest wait between a writer being ready and its kill. Default 400 ms. */
  maximumDelayMs?: number;
  /** Where the kill lands, in [0, 1). Default `Math.random`. */
  random?: () => number;
}

const packageDirectory = fileURLToPath(new URL("..", import.meta.url));

/**
 * A Node writer process appending to a `Session` on a better-sqlite3 file database, killed with SIGKILL at
 * a random moment, again and again; after each kill the database is opened afresh and checked (every
 * acknowledged message present exactly once on the path, no fork, no half-written message, no batch
 * stored in part, the next turn's prompt valid). The next writer starts at the first batch or turn not
 * acknowledged, so an append the kill cut short is retried as it was (an identical retry must succeed).
 */
export async function killedWriter(options: KilledWriterOptions): Promise<FaultFigures> {
  const { mode, layout, journalMode, kills } = options;
  const killsPerDatabase = options.killsPerDatabase ?? 20;
  const maximumDelayMs = options.maximumDelayMs ?? 400;
  const random = options.random ?? Math.random;
  const script = mode === "turns" ? turnScript : batchScript;
  const tally = new FaultTally(`SIGKILL mid-append, ${mode} (${layout} layout, ${journalMode} journal)`);
  const directory = mkdtempSync(join(tmpdir(), "contextblocks-faults-"));
  try {
    let database = "";
    let start = 0;
    let acknowledged: string[] = [];
    for (let kill = 0; kill < kills; kill++) {
      if (kill % killsPerDatabase === 0) {
        database = join(directory, `writer-${kill}.sqlite`);
        start = 0;
        acknowledged = [];
      }
      const writer = startWriter({ database, journalMode, layout, sessionId: "chat", mode, start });
      await writer.ready;
      // Every other writer is killed only once it acknowledged a write, so a run makes progress however
      // short its random waits; the others may die in their first write (often the retry of a cut one).
      if (kill % 2 === 1) await Promise.race([writer.firstAcknowledgement, writer.exited]);
      await pause(random() * maximumDelayMs);
      const outcome = await writer.kill();
      tally.fault();
      for (const report of writer.acknowledged) {
        acknowledged.push(...report.ids);
        start = report.index + 1;
        tally.acknowledge(report.ids);
        tally.memory(report.heapUsed);
      }
      const findings = await checkDatabase(database, layout, acknowledged, script);
      const clean = tally.check(findings, basename(database), `kill ${kill + 1}`);
      if (outcome.failure !== null)
        tally.example(`kill ${kill + 1}: the writer failed first: ${outcome.failure}`);
      if (clean && outcome.failure === null) tally.survive();
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  return tally.figures();
}

/** What `crashedWriter` found: the check of the database its writer left. */
export interface CrashFindings {
  /** Messages the writer acknowledged before it killed itself. */
  acknowledged: string[];
  findings: TranscriptFindings;
}

/**
 * One writer on a new database that kills itself (SIGKILL) at an exact point, and the check of what it
 * left: a repro of what a kill at a random moment finds only sometimes.
 */
export async function crashedWriter(
  crashPoint: CrashPoint,
  options: { layout: NewSessionLayout; journalMode: "wal" | "delete" },
): Promise<CrashFindings> {
  const mode: WriterMode = crashPoint === "inside-a-batch" ? "appends" : "turns";
  const directory = mkdtempSync(join(tmpdir(), "contextblocks-faults-"));
  try {
    const database = join(directory, "crash.sqlite");
    const writer = startWriter({ ...options, database, sessionId: "chat", mode, start: 0, crashPoint });
    await writer.ready;
    const crashed = await Promise.race([writer.exited.then(() => true), pause(60_000).then(() => false)]);
    if (!crashed) {
      await writer.kill();
      throw new Error(`crashedWriter: the writer never reached ${crashPoint}`);
    }
    const acknowledged = writer.acknowledged.flatMap((report) => report.ids);
    const findings = await checkDatabase(
      database,
      options.layout,
      acknowledged,
      mode === "turns" ? turnScript : batchScript,
    );
    return { acknowledged, findings };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

async function checkDatabase(
  path: string,
  layout: NewSessionLayout,
  acknowledged: readonly string[],
  script: WriterScript,
): Promise<TranscriptFindings> {
  const database = new Database(path);
  try {
    const store = new MessageTree(
      new SqliteSessionStore(database, { sessionId: "chat", newDatabaseLayout: layout }),
    );
    return await checkTranscript(store, acknowledged, script);
  } finally {
    database.close();
  }
}

interface RunningWriter {
  /** Resolves when the writer has opened the database and is about to append. */
  readonly ready: Promise<void>;
  /** What it acknowledged so far. */
  readonly acknowledged: readonly Extract<WriterMessage, { type: "acknowledged" }>[];
  /** Resolves when it acknowledged its first write. */
  readonly firstAcknowledgement: Promise<void>;
  /** Resolves once it exited (and its reports were read). */
  readonly exited: Promise<void>;
  /** SIGKILL; resolves once it exited, with what it printed if it failed on its own first. */
  kill(): Promise<{ failure: string | null }>;
}

function startWriter(options: WriterOptions): RunningWriter {
  const child: ChildProcess = fork(compiledProcess("sqlite-writer.ts"), [JSON.stringify(options)], {
    cwd: packageDirectory,
    execArgv: [],
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  let errors = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    errors += chunk.toString();
  });
  const acknowledged: Extract<WriterMessage, { type: "acknowledged" }>[] = [];
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  let acknowledge = () => {};
  const firstAcknowledgement = new Promise<void>((resolve) => {
    acknowledge = resolve;
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.on("message", (message: WriterMessage) => {
      if (message.type === "ready") resolve();
      else {
        acknowledged.push(message);
        acknowledge();
      }
    });
    void exited.then(() => reject(new Error(`the writer exited before it was ready:\n${errors}`)));
  });
  return {
    ready,
    acknowledged,
    firstAcknowledgement,
    exited,
    async kill() {
      const failedFirst = child.exitCode !== null;
      child.kill("SIGKILL");
      await exited;
      return { failure: failedFirst ? errors.trim() || `exit code ${child.exitCode}` : null };
    },
  };
}

function pause(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
