import { DurableObject } from "cloudflare:workers";
import type {
  BlockVersion,
  BlockWrite,
  ConditionalContextProvider,
  VersionedProvider,
  VersionQuery,
} from "@contextblocks/core";
import { SqliteContextProvider } from "@contextblocks/sqlite";

/** The label of the block inside its own object (one object per shared block). */
const LABEL = "shared";

/**
 * One shared block (a user profile, team knowledge) living in its own Durable Object, read and written by
 * every agent's object over RPC. The object runs one request at a time and its SQLite calls are synchronous,
 * so `writeIf` (a conditional write) is atomic: two agents editing at once never lose each other's edits.
 * Versions are kept with each write (`versions`, in the same transaction).
 */
export class SharedBlockObject extends DurableObject<Env> {
  private readonly block: SqliteContextProvider;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.block = new SqliteContextProvider(ctx.storage, { label: LABEL, versions: true });
  }

  read(): Promise<string | null> {
    return this.block.get();
  }

  write(content: string, write?: BlockWrite): Promise<void> {
    return this.block.set(content, write);
  }

  writeIf(expected: string, content: string, write?: BlockWrite): Promise<boolean> {
    return this.block.setIf(expected, content, write);
  }

  versions(query?: VersionQuery): Promise<BlockVersion[]> {
    return this.block.versions?.(query) ?? Promise.resolve([]);
  }
}

/**
 * The provider an agent declares for a shared block: every call goes to the block's object over RPC, so
 * every agent reads the current text. Declare the block `whenChanged: "remind"`: another agent's write then
 * reaches this agent as a reminder after its cached prefix, never as a change of its frozen prompt.
 * Writable, conditional (`setIf`) and versioned, like a local SQLite block.
 */
export class SharedBlockProvider implements VersionedProvider, ConditionalContextProvider {
  constructor(private readonly stub: DurableObjectStub<SharedBlockObject>) {}

  get(): Promise<string | null> {
    return this.stub.read();
  }

  set(content: string, write?: BlockWrite): Promise<void> {
    return this.stub.write(content, write);
  }

  setIf(expected: string, content: string, write?: BlockWrite): Promise<boolean> {
    return this.stub.writeIf(expected, content, write);
  }

  versions(query?: VersionQuery): Promise<BlockVersion[]> {
    return this.stub.versions(query);
  }
}
