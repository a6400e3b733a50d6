import { env, runInDurableObject } from "cloudflare:test";
import { describeContextProvider, describeVersions, routeProviderCalls } from "@contextblocks/conformance";
import { SqliteContextProvider } from "../../src/index.js";

/** The Durable Object a provider's storage belongs to. */
type Stub = DurableObjectStub<import("./worker.js").ContextTestObject>;

const objectOf = new WeakMap<SqliteContextProvider, Stub>();
let objects = 0;

/**
 * A real `SqliteContextProvider` on the object's `ctx.storage`, built inside the object, with every call
 * (get, set, init) run inside it through runInDurableObject.
 */
async function openIn(
  stub: Stub,
  namespace: string | undefined,
  retention?: number,
): Promise<SqliteContextProvider> {
  const versions = retention === undefined ? true : { retention };
  const provider = await runInDurableObject(
    stub,
    (_instance, state) => new SqliteContextProvider(state.storage, { namespace, versions }),
  );
  const routed = routeProviderCalls(provider, (call) => runInDurableObject(stub, call));
  objectOf.set(routed, stub);
  return routed;
}

function objectFor(provider: SqliteContextProvider): Stub {
  const stub = objectOf.get(provider);
  if (stub === undefined) throw new Error("conformance: a provider this test file did not make");
  return stub;
}

describeContextProvider(
  "SqliteContextProvider on Durable Object storage",
  // A new Durable Object (its own SQLite database) for every provider the suite asks for.
  () => openIn(env.CONTEXT_OBJECT.getByName(`conformance-${++objects}`), undefined),
  {
    capabilities: { readable: true, writable: true, namespacing: true, versions: true },
    reopen: (provider) => openIn(objectFor(provider), provider.namespace),
    namespace: (provider, namespace) => openIn(objectFor(provider), namespace),
  },
);

describeVersions(
  "SqliteContextProvider on Durable Object storage, keeping 3 versions",
  () => openIn(env.CONTEXT_OBJECT.getByName(`conformance-${++objects}`), undefined, 3),
  {
    capabilities: { writable: true, versions: true },
    reopen: (provider) => openIn(objectFor(provider), provider.namespace, 3),
    versionRetention: 3,
  },
);
