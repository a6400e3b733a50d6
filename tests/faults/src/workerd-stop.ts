import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SessionMessage } from "@contextblocks/sessions";
import { MessageTree } from "@contextblocks/sessions/store-kit";
import { SqliteSessionStore } from "@contextblocks/sqlite";
import Database from "better-sqlite3";
import { startWranglerDev, type WranglerDev } from "worker-agent/scripts/wrangler-dev.js";
import { type FaultFigures, FaultTally } from "./figures.js";
import { checkTranscript, noFindings, type TranscriptFindings } from "./transcript-check.js";
import type { WriterScript } from "./writer-script.js";

/** Options of `workerdStopped`. */
export interface WorkerdStoppedOptions {
  /** How many times workerd is killed mid-turn and started again. */
  stops: number;
  /** The longest wait, once the Worker answers, before the kill. Default 1,500 ms. */
  maximumDelayMs?: number;
  /** Where the kill lands, in [0, 1). Default `Math.random`. */
  random?: () => number;
}

const question = (turn: number) => `How do I deploy the worker? (question ${turn})`;
const questionPattern = /^How do I deploy the worker\? \(question \d+\)$/;

/**
 * What examples/worker-agent stores for a question: the user's words, then one assistant message per
 * model call (the `search_context` call with its result, then the answer). The model's words are the
 * scripted model's, so an assistant message is whole when every part is well formed.
 */
const agentScript: WriterScript = {
  isWhole(message: SessionMessage) {
    if (message.role === "user") {
      return message.parts.length === 1 && questionPattern.test(message.parts[0]?.text ?? "");
    }
    return (
      message.role === "assistant" &&
      message.parts.length > 0 &&
      message.parts.every(
        (part) =>
          typeof part.type === "string" &&
          (part.type !== "text" || typeof part.text === "string") &&
          (!part.type.startsWith("tool-") ||
            (typeof part.toolCallId === "string" && typeof part.state === "string")),
      )
    );
  },
  partialBatches(path) {
    // The first model call's batch is the user's words and the first assistant message.
    return path.flatMap((message, index) =>
      message.role === "user" && path[index + 1]?.role !== "assistant" ? [message.id] : [],
    );
  },
};

/**
 * examples/worker-agent under a real `wrangler dev` (workerd), chatting with one agent, killed with
 * SIGKILL (wrangler and workerd, the whole process group) at a random moment of a turn, then started
 * again on the same state, many times. After each kill the agent's Durable Object database is copied as
 * the kill left it and checked: every message of an answered turn present exactly once, no fork, no
 * half-written message, no batch stored in part, the next turn's prompt valid. The offline scripted model
 * answers each question with a `search_context` call, then its answer (two model calls a turn).
 */
export async function workerdStopped(options: WorkerdStoppedOptions): Promise<FaultFigures> {
  const maximumDelayMs = options.maximumDelayMs ?? 1_500;
  const random = options.random ?? Math.random;
  const tally = new FaultTally("workerd killed mid-turn (examples/worker-agent under wrangler dev)");
  const persistTo = mkdtempSync(join(tmpdir(), "contextblocks-faults-workerd-"));
  const acknowledged = new Map<string, string[]>();
  let turn = 0;
  try {
    for (let stop = 1; stop <= options.stops; stop++) {
      // No compaction: the check reads the stored path as the model would get it.
      const dev = await startWranglerDev({ persistTo, vars: { COMPACT_AFTER_TOKENS: "1000000000" } });
      let killed = false;
      const chatting = (async () => {
        while (!killed) {
          const answer = await chat(dev, question(turn));
          if (answer === null) return;
          acknowledged.set(answer.session, [
            ...(acknowledged.get(answer.session) ?? []),
            ...answer.storedMessageIds,
          ]);
          tally.acknowledge(answer.storedMessageIds);
          turn++;
        }
      })();
      await new Promise((resolve) => setTimeout(resolve, random() * maximumDelayMs));
      killed = true;
      killGroup(dev.pid);
      tally.fault();
      await chatting;
      await dev.stop();
      let survived = true;
      for (const [session, findings] of await checkState(persistTo, acknowledged)) {
        if (!tally.check(findings, session, `stop ${stop}`)) survived = false;
      }
      if (survived) tally.survive();
    }
  } finally {
    rmSync(persistTo, { recursive: true, force: true });
  }
  return tally.figures();
}

interface ChatAnswer {
  session: string;
  storedMessageIds: string[];
}

/** One turn; `null` when the Worker did not answer it (killed meanwhile). */
async function chat(dev: WranglerDev, message: string): Promise<ChatAnswer | null> {
  try {
    const response = await fetch(`${dev.url}/agents/faults/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message }),
    });
    if (response.status !== 200)
      throw new Error(`chat answered ${response.status}: ${await response.text()}`);
    const answer = (await response.json()) as { session: { id: string }; storedMessageIds: string[] };
    return { session: answer.session.id, storedMessageIds: answer.storedMessageIds };
  } catch (error) {
    if (error instanceof TypeError) return null; // the connection went down with workerd
    throw error;
  }
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/**
 * The agent's Durable Object database as the kill left it, copied (the next start must find it as it was)
 * and checked session by session.
 */
async function checkState(
  persistTo: string,
  acknowledged: ReadonlyMap<string, readonly string[]>,
): Promise<Map<string, TranscriptFindings>> {
  const objects = join(persistTo, "v3", "do", "contextblocks-worker-agent-AgentObject");
  const file = existsSync(objects)
    ? readdirSync(objects).find((name) => name.endsWith(".sqlite") && name !== "metadata.sqlite")
    : undefined;
  if (file === undefined) {
    // Killed before the agent's first request: nothing stored, so nothing may have been acknowledged.
    return new Map([...acknowledged].map(([session, ids]) => [session, { ...noFindings(), lost: [...ids] }]));
  }
  const copy = mkdtempSync(join(tmpdir(), "contextblocks-faults-copy-"));
  try {
    for (const suffix of ["", "-wal", "-shm"]) {
      if (existsSync(join(objects, file + suffix)))
        copyFileSync(join(objects, file + suffix), join(copy, file + suffix));
    }
    const database = new Database(join(copy, file));
    try {
      const hasMessages = database
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'assistant_messages'")
        .get();
      const stored = (
        hasMessages === undefined
          ? []
          : database.prepare("SELECT DISTINCT session_id FROM assistant_messages").all()
      ) as { session_id: string }[];
      const sessions = new Set([...acknowledged.keys(), ...stored.map((row) => row.session_id)]);
      const results = new Map<string, TranscriptFindings>();
      for (const session of sessions) {
        const store = new MessageTree(new SqliteSessionStore(database, { sessionId: session }));
        results.set(session, await checkTranscript(store, acknowledged.get(session) ?? [], agentScript));
      }
      return results;
    } finally {
      database.close();
    }
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}
