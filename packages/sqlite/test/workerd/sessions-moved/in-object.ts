import { env, runInDurableObject } from "cloudflare:test";

/** Run `callback` inside the named Durable Object, with its state (and so its SQLite storage). */
export function inObject<R>(
  name: string,
  callback: (state: DurableObjectState) => R | Promise<R>,
): Promise<R> {
  return runInDurableObject(env.SESSION_OBJECT.getByName(name), (_instance, state) => callback(state));
}
