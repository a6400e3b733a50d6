import { describeSessionBackend } from "@contextblocks/conformance";
import type { SessionBackend } from "@contextblocks/sessions";
import { postgresBackend } from "../src/index.js";
import { createSchema, type TestSchema } from "./database.js";

// The registry, run-state and whole-backend suites on the throwaway cluster, one fresh schema per backend.
const schemas = new WeakMap<SessionBackend, TestSchema>();

describeSessionBackend(
  "postgresBackend (pg.Pool)",
  async () => {
    const schema = await createSchema();
    const backend = postgresBackend(schema.pool());
    schemas.set(backend, schema);
    return backend;
  },
  { cleanup: (backend) => schemas.get(backend)?.drop() },
);
