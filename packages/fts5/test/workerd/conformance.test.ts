import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describeContextProvider, routeProviderCalls } from "@contextblocks/conformance";
import { Fts5SearchProvider, type Fts5SearchProviderOptions } from "../../src/index.js";

type Stub = DurableObjectStub<import("./worker.js").SearchObject>;

/** The Durable Object each provider lives in. */
const objectOf = new WeakMap<Fts5SearchProvider, Stub>();

/**
 * A real provider on the object's `ctx.storage`, built inside the object, with every call run inside it
 * (storage may only be touched in the object's own context).
 */
async function openIn(stub: Stub, options: Fts5SearchProviderOptions = {}): Promise<Fts5SearchProvider> {
  const provider = await runInDurableObject(
    stub,
    (_object, state) => new Fts5SearchProvider(state.storage, options),
  );
  const routed = routeProviderCalls(provider, (call) => runInDurableObject(stub, call));
  objectOf.set(routed, stub);
  return routed;
}

function objectFor(provider: Fts5SearchProvider): Stub {
  const stub = objectOf.get(provider);
  if (stub === undefined) throw new Error("a provider this test file did not make");
  return stub;
}

describeContextProvider(
  "Fts5SearchProvider in a Durable Object",
  // Every provider the suite asks for gets its own Durable Object, so its own SQLite database.
  () => openIn(env.SEARCH_OBJECT.get(env.SEARCH_OBJECT.idFromName(crypto.randomUUID()))),
  {
    capabilities: { searchable: true, writable: true, delete: true, namespacing: true },
    reopen: (provider) => openIn(objectFor(provider), { namespace: provider.namespace }),
    namespace: (provider, namespace) => openIn(objectFor(provider), { namespace }),
    timeout: 20_000,
  },
);
