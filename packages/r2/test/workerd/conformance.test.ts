import { env } from "cloudflare:test";
import { describeContextProvider } from "@contextblocks/conformance";
import { R2SkillProvider } from "../../src/index.js";

/** Each provider the suite asks for gets its own folder of the one test bucket; namespaces are siblings. */
const folderOf = new WeakMap<R2SkillProvider, string>();
let folders = 0;

function open(folder: string, namespace = "base"): R2SkillProvider {
  // Encoded, so a namespace holding "/" stays a sibling folder instead of nesting inside another one.
  const prefix = `${folder}/${encodeURIComponent(namespace)}/`;
  const provider = new R2SkillProvider(env.SKILLS_BUCKET, { prefix });
  folderOf.set(provider, folder);
  return provider;
}

function folderFor(provider: R2SkillProvider): string {
  const folder = folderOf.get(provider);
  if (folder === undefined) throw new Error("conformance: a provider this test file did not make");
  return folder;
}

describeContextProvider("R2SkillProvider on a local R2 bucket", () => open(`conformance-${++folders}`), {
  capabilities: { readable: true, writable: true, loadable: true, delete: true, namespacing: true },
  reopen: (provider) => {
    const reopened = new R2SkillProvider(env.SKILLS_BUCKET, { prefix: provider.prefix });
    folderOf.set(reopened, folderFor(provider));
    return reopened;
  },
  // A namespace is a sibling prefix in the same bucket: `<folder>/<encoded namespace>/`.
  namespace: (provider, namespace) => open(folderFor(provider), namespace),
});
