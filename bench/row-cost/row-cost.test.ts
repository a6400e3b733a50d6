/**
 * Not a test of behaviour: the row-cost benchmark, run in workerd by vitest-pool-workers
 * (`vitest run --config vitest.rowcost.config.ts`). Each system runs in its own Durable Object. The figures
 * travel to the Node side in the test's `meta` (written by vitest's JSON reporter); bench/src/row-cost.ts
 * starts this run and reads them.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import type { MeasuredOperation, RowCostFigures, RowCostRow } from "../src/row-cost-figures.js";
import { blockRowCosts, STORED_BLOCKS, type SystemName, searchRowCosts } from "./measure.js";

declare module "vitest" {
  interface TaskMeta {
    rowCost?: RowCostFigures;
  }
}

type Measured = MeasuredOperation[];

function inObject(
  name: string,
  measure: (storage: DurableObjectStorage) => Promise<Measured>,
): Promise<Measured> {
  return runInDurableObject(env.ROW_COST_OBJECT.getByName(name), (_instance, state) =>
    measure(state.storage),
  );
}

function pair(group: string, contextblocks: Measured, agents: Measured): RowCostRow[] {
  return contextblocks.map((row, index) => {
    const other = agents[index];
    if (other?.operation !== row.operation)
      throw new Error(`row-cost: operations out of step at ${row.operation}`);
    const note =
      row.matches === undefined || other.matches === undefined
        ? {}
        : {
            note: `mean matches returned: contextblocks ${row.matches.toFixed(1)}, agents/context ${other.matches.toFixed(1)}`,
          };
    return { group, operation: row.operation, contextblocks: row.cost, agents: other.cost, ...note };
  });
}

it("measures rows read and written per operation", async ({ task }) => {
  const entryCounts = env.ROW_COST_ENTRIES.split(",").map(Number);
  const measure = (system: SystemName) =>
    inObject(`blocks-${system}`, (storage) => blockRowCosts(storage, system));
  const rows = pair(`${STORED_BLOCKS} blocks`, await measure("contextblocks"), await measure("agents"));
  for (const entries of entryCounts) {
    const search = (system: SystemName) =>
      inObject(`search-${entries}-${system}`, (storage) => searchRowCosts(storage, system, entries));
    rows.push(
      ...pair(
        `${entries.toLocaleString("en-US")} entries`,
        await search("contextblocks"),
        await search("agents"),
      ),
    );
  }
  // The figures are real counter readings: a warm freeze reads nothing, a write writes something.
  expect(rows.find((row) => row.operation.startsWith("warm freeze"))?.contextblocks).toEqual({
    read: 0,
    written: 0,
  });
  expect(
    rows.find((row) => row.operation.startsWith("provider `set`"))?.contextblocks.written,
  ).toBeGreaterThan(0);
  task.meta.rowCost = { rows };
}, 900_000);
