import type { PostgresSource } from "../src/index.js";
import { createSchema, type TestSchema } from "./database.js";

/** How a test provider reaches the database. */
export type Connection = "client" | "pool" | "two clients" | "postgres.js";

/** A provider made on a connection, and the schema (backing store) it lives in. */
export interface Store {
  readonly schema: TestSchema;
  live: number;
}

const storeOf = new WeakMap<object, Store>();

/**
 * Opens a provider in `store` through `connection`. With "two clients" the provider is two providers on two
 * separate connections to the same block, with calls taken in turn: every concurrent check then has writers
 * on two connections racing on the same rows.
 */
export async function openProvider<P extends object>(
  store: Store,
  connection: Connection,
  make: (source: PostgresSource) => P,
): Promise<P> {
  let provider: P;
  if (connection === "pool") provider = make(store.schema.pool());
  else if (connection === "postgres.js")
    provider = make(store.schema.postgresJs() as unknown as PostgresSource);
  else if (connection === "client") provider = make(await store.schema.client());
  else provider = alternating(make(await store.schema.client()), make(await store.schema.client()));
  store.live += 1;
  storeOf.set(provider, store);
  return provider;
}

export async function newStore(): Promise<Store> {
  return { schema: await createSchema(), live: 0 };
}

export function storeFor(provider: object): Store {
  const store = storeOf.get(provider);
  if (store === undefined) throw new Error("test: a provider these helpers did not make");
  return store;
}

/** Releases one provider; the schema is dropped with the last provider of its store. */
export async function release(provider: object): Promise<void> {
  const store = storeFor(provider);
  store.live -= 1;
  if (store.live === 0) await store.schema.drop();
}

/** `first` and `second` as one provider: `init` goes to both, every other call to each in turn. */
function alternating<P extends object>(first: P, second: P): P {
  let turn = 0;
  return new Proxy(first, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      if (property === "init") {
        return (...parameters: unknown[]) => {
          value.apply(first, parameters);
          (Reflect.get(second, property, second) as (...parameters: unknown[]) => unknown).apply(
            second,
            parameters,
          );
        };
      }
      return (...parameters: unknown[]) => {
        const chosen = turn++ % 2 === 0 ? first : second;
        return (Reflect.get(chosen, property, chosen) as (...parameters: unknown[]) => unknown).apply(
          chosen,
          parameters,
        );
      };
    },
  });
}
