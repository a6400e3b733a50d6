import {
  InMemoryRunStateStore,
  InMemorySessionRegistry,
  inMemoryBackend,
} from "@contextblocks/sessions/memory";
import { describeRunStateStore, describeSessionBackend, describeSessionRegistry } from "../src/index.js";

// The registry, run-state and backend suites on the reference backend (the SQLite and Postgres packages run
// them on theirs).
describeSessionBackend("memory", () => inMemoryBackend());
describeSessionRegistry("memory registry on its own", () => new InMemorySessionRegistry());
describeRunStateStore("memory run state on its own", () => new InMemoryRunStateStore());
