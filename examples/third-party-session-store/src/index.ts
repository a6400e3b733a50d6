export {
  InMemoryKeyValueNamespace,
  type KeyValueListPage,
  type KeyValueNamespace,
  listKeys,
} from "./key-value.js";
export { KeyValueSessionStore, type KeyValueSessionStoreOptions } from "./key-value-session-store.js";
export { type SingleWriter, WriteQueue, writeQueueFor } from "./single-writer.js";
