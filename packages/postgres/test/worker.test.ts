import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresContextProvider, PostgresSearchProvider } from "../src/index.js";
import { postgresUrl } from "./database.js";
import { startWranglerDev, type WranglerDev } from "./wrangler-dev.js";

// The Worker path: test/worker/worker.ts in workerd under `wrangler dev`, its Hyperdrive binding connected to
// the throwaway cluster. The Node side then reads what the Worker wrote, straight from Postgres.

let dev: WranglerDev | undefined;
let admin: pg.Client;
let client: pg.Client;
const database = `worker_${randomUUID().replaceAll("-", "")}`;

beforeAll(async () => {
  // A database of its own: the binding's connection string names it, as a Hyperdrive configuration does.
  admin = new pg.Client({ connectionString: postgresUrl() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const url = new URL(postgresUrl());
  url.pathname = `/${database}`;
  client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  dev = await startWranglerDev(fileURLToPath(new URL("./worker/", import.meta.url)), url.toString());
}, 120_000);

afterAll(async () => {
  await dev?.stop();
  await client?.end();
  await admin?.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin?.end();
});

const call = async (method: string, path: string, body?: string) => {
  if (dev === undefined) throw new Error("wrangler dev did not start");
  const response = await fetch(`${dev.url}${path}`, { method, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  expect(response.status, `${method} ${path}: ${text}\n${dev.output()}`).toBe(200);
  return text;
};

describe("a Worker on Postgres through Hyperdrive (wrangler dev)", () => {
  it("writes blocks, indexes, searches and freezes the prompt in the cluster", async () => {
    await call("PUT", "/memory?agent=a1", "The user likes tea.");
    await call("PUT", "/knowledge?agent=a1&key=kb-ferry", "The ferry to the island leaves at nine.");
    expect(await call("GET", "/search?agent=a1&q=When%20does%20the%20ferry%20leave%3F")).toBe(
      "[kb-ferry]\nThe ferry to the island leaves at nine.",
    );
    const prompt = await call("GET", "/prompt?agent=a1");
    expect(prompt).toContain("The user likes tea.");
    expect(prompt).toContain("1 entries indexed.");
    // A second request (a new connection, a cold ContextBlocks) serves the stored prompt unchanged.
    await call("PUT", "/memory?agent=a1", "The user likes coffee now.");
    expect(await call("GET", "/prompt?agent=a1")).toBe(prompt);

    // Node reads the same rows from Postgres directly.
    expect(await new PostgresContextProvider(client, "memory_a1").get()).toBe("The user likes coffee now.");
    expect(await new PostgresContextProvider(client, "_prompt_a1").get()).toBe(prompt);
    const knowledge = new PostgresSearchProvider(client, { label: "knowledge", namespace: "a1" });
    expect(await knowledge.get()).toBe("1 entries indexed.");
    // Another agent's data stays apart.
    expect(await call("GET", "/search?agent=a2&q=ferry")).toBe("");
  });
});
