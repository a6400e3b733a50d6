import { env, runInDurableObject } from "cloudflare:test";
import { describeContextProvider, routeProviderCalls } from "@contextblocks/conformance";
import { SqliteSkillProvider } from "../../src/index.js";

/** The Durable Object a provider's storage belongs to. */
type Stub = DurableObjectStub<import("./worker.js").ContextTestObject>;

const objectOf = new WeakMap<SqliteSkillProvider, Stub>();
let objects = 0;

/** A real `SqliteSkillProvider` on the object's `ctx.storage`, every call run inside the object. */
async function openIn(stub: Stub, namespace: string | undefined): Promise<SqliteSkillProvider> {
  const provider = await runInDurableObject(
    stub,
    (_instance, state) => new SqliteSkillProvider(state.storage, { namespace, versions: { retention: 3 } }),
  );
  const routed = routeProviderCalls(provider, (call) => runInDurableObject(stub, call));
  objectOf.set(routed, stub);
  return routed;
}

function objectFor(provider: SqliteSkillProvider): Stub {
  const stub = objectOf.get(provider);
  if (stub === undefined) throw new Error("conformance: a provider this test file did not make");
  return stub;
}

describeContextProvider(
  "SqliteSkillProvider on Durable Object storage",
  // A new Durable Object (its own SQLite database) for every provider the suite asks for.
  () => openIn(env.CONTEXT_OBJECT.getByName(`skill-conformance-${++objects}`), undefined),
  {
    capabilities: {
      readable: true,
      writable: true,
      loadable: true,
      delete: true,
      namespacing: true,
      versions: true,
    },
    versionRetention: 3,
    reopen: (provider) => openIn(objectFor(provider), provider.namespace),
    namespace: (provider, namespace) => openIn(objectFor(provider), namespace),
  },
);
