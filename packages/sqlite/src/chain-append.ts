import type {
  AppendPlacement,
  AppendResult,
  IdHolder,
  MessageRecord,
} from "@contextblocks/sessions/store-kit";
import { type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { searchOrderBump } from "./keyed-tail.js";
import type { ChainMemory, LayoutStrategy } from "./layout-strategy.js";
import { readContinuations } from "./message-index.js";
import { appendedContinuationRows, sliceStoredMessage, unstoredChunksDeletion } from "./message-rows.js";
import { type PlaceRow, wholeNumber } from "./path-row.js";

/** One record of a chain as the append writes it: its stored JSON cut into row-sized slices. */
interface Link {
  record: MessageRecord;
  content: string;
  slices: string[];
  tokens: number | null;
}

/** Where the chain goes: its parent, what else the first insert checks, and the parent's totals. */
interface Plan {
  links: Link[];
  parent: PlaceRow | null;
  /** The guard proves the parent still stored, its totals known: the first insert reads no parent row. */
  parentKnown?: boolean;
  guard: SqlStatement;
  depth: number | null;
  pathTokens: number | null;
}

/**
 * A chain of records stored by `SqliteSessionStore.append`: all of it or none, in one transaction where the
 * client has them. The first insert is the commit point: it stores its record only if the parent is still
 * what was read (the latest leaf, or an explicit parent still there), no record's id is stored anywhere in
 * the database and no stored message of the session names one of the ids as its parent; each next insert
 * stores its record under the one before only if that one was stored (`changes()`). What failed is then
 * read and answered as a conflict; `null` when nothing did any more (another writer moved the leaf): the
 * caller reads again and retries.
 */
export class ChainAppend {
  readonly #client: SqlClient;
  readonly #sessionId: string;
  readonly #layout: LayoutStrategy;

  constructor(client: SqlClient, sessionId: string, layout: LayoutStrategy) {
    this.#client = client;
    this.#sessionId = sessionId;
    this.#layout = layout;
  }

  /** The records with their slices (refusing one too large to store before anything is written). */
  static linksOf(records: readonly MessageRecord[]): Link[] {
    return records.map((record) => {
      const content = record.content ?? "";
      return {
        record,
        content,
        slices: sliceStoredMessage(content, record.id),
        tokens: wholeNumber(record.tokens),
      };
    });
  }

  async run(links: Link[], placement: AppendPlacement): Promise<AppendResult | null> {
    const planned = await this.#plan(links, placement);
    if ("status" in planned) return planned;
    const atomic = this.#client.atomic ? await this.#atomic(planned) : null;
    const place = atomic !== null ? atomic.place : await this.#oneByOne(planned);
    if (place === "retry") return null;
    if (place === null) return this.#conflict(links, placement);
    const last = links.at(-1) as Link;
    const depth = planned.depth === null ? null : planned.depth + links.length - 1;
    let pathTokens = planned.pathTokens;
    for (const link of links)
      pathTokens = pathTokens === null || link.tokens === null ? null : pathTokens + link.tokens;
    this.#layout.remember({ id: last.record.id, order: place, depth, pathTokens }, atomic?.kept);
    return { status: "appended", parentId: planned.parent?.id ?? null };
  }

  /** The parent and the checks of the first insert; a stale leaf or a missing parent is answered here. */
  async #plan(links: Link[], placement: AppendPlacement): Promise<Plan | AppendResult> {
    const { parentId, expectedLeafId } = placement;
    // The remembered leaf, unchecked: the insert checks that it still is (no statement before it).
    let latest =
      expectedLeafId !== undefined || parentId === undefined ? await this.#layout.latestLeaf(false) : null;
    if (expectedLeafId !== undefined && (latest?.leaf?.id ?? null) !== expectedLeafId) {
      // A remembered leaf may be old: the refusal is answered on the leaf as it is now.
      this.#layout.forgetLatestLeaf();
      latest = await this.#layout.latestLeaf(true);
      if ((latest.leaf?.id ?? null) !== expectedLeafId)
        return { status: "stale-leaf", leafId: latest.leaf?.id ?? null };
    }
    let parent: PlaceRow | null = null;
    let guard: SqlStatement = sql`1`;
    let parentKnown = false;
    if (parentId === undefined) {
      parent = latest?.leaf ?? null;
      if (
        latest?.current !== undefined &&
        parent !== null &&
        parent.depth !== null &&
        parent.pathTokens !== null
      ) {
        // Proven current without a read: the insert takes the remembered totals, reading no parent row.
        guard = latest.current;
        parentKnown = true;
      } else {
        // The parent's row is the insert's source: its own check is the row being read.
        guard = latest?.stillAbove ?? guard;
      }
    } else {
      if (parentId !== null) {
        parent = await this.place(parentId);
        if (parent === null) return { status: "parent-missing", parentId };
      }
      if (latest !== null) guard = latest.still;
    }
    // A parent whose totals are not kept (another writer's row, a delete above it): summed once, here.
    const known =
      parent !== null && (parent.depth === null || parent.pathTokens === null)
        ? await this.#layout.totalsOf(parent)
        : null;
    return {
      links,
      parent,
      parentKnown,
      guard,
      depth: parent === null ? 0 : (parent.depth ?? known?.depth ?? 0) + 1,
      pathTokens: parent === null ? 0 : (parent.pathTokens ?? known?.tokens ?? null),
    };
  }

  /** The session's message with this id, as an append's parent or a walk's start. */
  async place(id: string): Promise<PlaceRow | null> {
    const rows = await this.#client.run<{
      id: string;
      order: number;
      depth: unknown;
      path_tokens: unknown;
    }>(sql`
      SELECT id, ${this.#layout.order} AS "order", depth, path_tokens FROM assistant_messages
      WHERE id = ${id} AND session_id = ${this.#sessionId}`);
    const row = rows[0];
    return row === undefined
      ? null
      : {
          id: row.id,
          order: Number(row.order),
          depth: wholeNumber(row.depth),
          pathTokens: wholeNumber(row.path_tokens),
        };
  }

  /**
   * One transaction: the continuation rows, the inserts, the outcome; `place` `null` when the first insert
   * stored nothing. `kept`: what the layout remembers of the chain.
   */
  async #atomic(plan: Plan): Promise<{ place: number | null; kept?: ChainMemory | undefined }> {
    const { links } = plan;
    const ids = links.map((link) => link.record.id);
    const statements: SqlStatement[] = links.flatMap((link) =>
      link.slices.length > 1 ? appendedContinuationRows(link.record.id, link.slices) : [],
    );
    const after = this.#layout.afterInserts(links, plan.parent);
    links.forEach((link, index) => {
      const previous = links[index - 1];
      statements.push(
        previous === undefined
          ? this.#insert(
              link,
              plan,
              sql`${this.#free(ids)} AND ${this.#layout.layoutStill} AND ${plan.guard}`,
            )
          : this.#insert(link, { ...plan, parent: null }, sql`changes() = 1`, previous.record.id),
        ...(after.statements[index] ?? []),
      );
    });
    const outcome = statements.length;
    statements.push(this.#layout.outcome, ...this.#layout.afterStored(ids.at(-1) as string));
    // A refused chain leaves none of its continuation rows: they hold its text and no row reads them.
    for (const link of links)
      if (link.slices.length > 1) statements.push(unstoredChunksDeletion(link.record.id));
    const row = (await this.#client.batch(statements))[outcome]?.[0] as
      | { stored?: unknown; place?: unknown }
      | undefined;
    return Number(row?.stored ?? 0) > 0 ? { place: Number(row?.place), kept: after.kept } : { place: null };
  }

  /**
   * On a client without transactions (a tagged-template `sql` without `ctx.storage`): one statement per
   * record, each atomic by itself, its outcome read with `RETURNING`; a chain cut short takes back what it
   * stored. `null` when the first insert stored nothing, `"retry"` when a later one lost to another writer.
   */
  async #oneByOne(plan: Plan): Promise<number | "retry" | null> {
    const stored: { id: string; place: number }[] = [];
    let parent = plan.parent;
    let depth = plan.depth;
    for (const [index, link] of plan.links.entries()) {
      const id = link.record.id;
      if (link.slices.length > 1) await this.#client.batch(appendedContinuationRows(id, link.slices));
      const check =
        index === 0
          ? sql`${this.#free(plan.links.map((entry) => entry.record.id))} AND ${this.#layout.layoutStill} AND ${plan.guard}`
          : this.#free([id]);
      const pathTokens = index === 0 ? plan.pathTokens : null;
      const rows = await this.#client.run<{ place: unknown }>(
        sql`${this.#insert(link, { ...plan, parent, depth, pathTokens }, check)} RETURNING ${this.#layout.order} AS place`,
      );
      const place = rows[0] === undefined ? null : Number(rows[0].place);
      if (
        place === null ||
        !(await this.#layout.finishLink(id, place, link.content, link.record.role, link.record.text))
      ) {
        if (link.slices.length > 1) await this.#client.run(unstoredChunksDeletion(id));
        await this.#takeBack(stored);
        return index === 0 && place === null ? null : "retry";
      }
      stored.push({ id, place });
      parent = { id, order: place, depth: null, pathTokens: null };
      depth = depth === null ? null : depth + 1;
    }
    return stored.at(-1)?.place ?? null;
  }

  /** Removes the records a chain cut short had stored (their search rows and continuation rows too). */
  async #takeBack(stored: readonly { id: string; place: number }[]): Promise<void> {
    for (const { id } of stored.slice().reverse()) {
      await this.#client.batch([
        ...(this.#layout.layout === "keyed" ? [searchOrderBump] : []),
        sql`DELETE FROM assistant_fts WHERE id = ${id} AND session_id = ${this.#sessionId}`,
        sql`DELETE FROM assistant_messages WHERE id = ${id} AND session_id = ${this.#sessionId}`,
        sql`DELETE FROM assistant_message_chunks WHERE id = ${id}`,
      ]);
    }
    this.#layout.forgetLatestLeaf();
  }

  /**
   * The INSERT of one record: under `plan.parent` (its row the source `p`), under the record the statement
   * before stored (`previous`), or as a root. Depth and path total are the parent's plus this record's.
   */
  #insert(link: Link, plan: Plan, check: SqlStatement, previous?: string): SqlStatement {
    const { record } = link;
    const chunks = link.slices.length - 1;
    if (previous === undefined && plan.parent !== null && plan.parentKnown === true) {
      // Under a parent the guard proves stored: its totals as remembered, no row read.
      const depth = plan.depth;
      const pathTokens =
        plan.pathTokens === null || link.tokens === null ? null : plan.pathTokens + link.tokens;
      return sql`
      INSERT INTO assistant_messages (id, session_id, parent_id, role, content, depth, content_chunks, tokens,
        path_tokens, created_at${this.#layout.orderColumns})
      SELECT ${record.id}, ${this.#sessionId}, ${plan.parent.id}, ${record.role}, ${link.slices[0] ?? ""}, ${depth},
        ${chunks > 0 ? chunks : null}, ${link.tokens}, ${pathTokens}, ${record.createdAt}${this.#layout.orderValues(true)}
      WHERE ${check}`;
    }
    const underRow = previous !== undefined || plan.parent !== null;
    const source = underRow ? sql`assistant_messages AS p` : sql`(SELECT 1) AS p`;
    const parentIs =
      previous !== undefined
        ? this.#layout.previousIs(previous)
        : plan.parent !== null
          ? this.#layout.parentIs(plan.parent)
          : sql`1`;
    const parentId = previous ?? plan.parent?.id ?? null;
    // The parent row's totals where it keeps them, else what the plan summed (`NULL` + n is `NULL`).
    const knownDepth = previous !== undefined ? null : plan.depth === null ? null : plan.depth - 1;
    const depth = underRow ? sql`COALESCE(p.depth, ${knownDepth}) + 1` : sql`0`;
    const knownTokens = previous !== undefined ? null : plan.pathTokens;
    const pathTokens = underRow
      ? sql`COALESCE(p.path_tokens, ${knownTokens}) + ${link.tokens}`
      : sql`${link.tokens}`;
    return sql`
      INSERT INTO assistant_messages (id, session_id, parent_id, role, content, depth, content_chunks, tokens,
        path_tokens, created_at${this.#layout.orderColumns})
      SELECT ${record.id}, ${this.#sessionId}, ${parentId}, ${record.role}, ${link.slices[0] ?? ""}, ${depth},
        ${chunks > 0 ? chunks : null}, ${link.tokens}, ${pathTokens}, ${record.createdAt}${this.#layout.orderValues(underRow)}
      FROM ${source} WHERE ${parentIs} AND ${check}`;
  }

  /** None of `ids` is stored (in any session: ids are unique per database) or still a parent in this one. */
  #free(ids: readonly string[]): SqlStatement {
    const stored =
      ids.length === 1
        ? sql`NOT EXISTS (SELECT 1 FROM assistant_messages WHERE id = ${ids[0] ?? ""})`
        : sql`NOT EXISTS (SELECT 1 FROM assistant_messages WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)})))`;
    return sql`${stored} AND ${this.#layout.noChildrenOf(ids)}`;
  }

  /**
   * What stopped a chain that stored nothing, in the order the contract checks: a stale leaf, a missing
   * parent, then per record a taken id or an id still a parent. `null` when none holds any more.
   */
  async #conflict(links: readonly Link[], placement: AppendPlacement): Promise<AppendResult | null> {
    this.#layout.forgetLatestLeaf();
    if (placement.expectedLeafId !== undefined) {
      const leaf = (await this.#layout.latestLeaf(true)).leaf;
      if ((leaf?.id ?? null) !== placement.expectedLeafId)
        return { status: "stale-leaf", leafId: leaf?.id ?? null };
    }
    if (typeof placement.parentId === "string" && (await this.place(placement.parentId)) === null) {
      return { status: "parent-missing", parentId: placement.parentId };
    }
    for (const [index, link] of links.entries()) {
      const id = link.record.id;
      if (await this.#layout.dropHalfStored(id)) return null;
      const holder = await this.#holder(id);
      if (holder !== null) return { status: "id-taken", index, holder };
      if (await this.#layout.stillAParent(id)) return { status: "still-a-parent", index };
    }
    return null;
  }

  /** The stored record holding `id`, in any session, its continuation rows joined. */
  async #holder(id: string): Promise<IdHolder | null> {
    const rows = await this.#client.query<{
      id: string;
      session_id: string;
      parent_id: string | null;
      role: string;
      content: string;
      content_chunks: number | null;
      created_at: string | null;
      tokens: unknown;
    }>`SELECT id, session_id, parent_id, role, content, content_chunks, created_at, tokens
      FROM assistant_messages WHERE id = ${id}`;
    const row = rows[0];
    if (row === undefined) return null;
    const continued =
      Number(row.content_chunks ?? 0) > 0 ? await readContinuations(this.#client, [id]) : null;
    const holder: IdHolder = {
      id: row.id,
      sessionId: row.session_id,
      parentId: row.parent_id ?? null,
      role: row.role,
      content: row.content + (continued?.get(id) ?? ""),
      createdAt: row.created_at ?? null,
    };
    const tokens = wholeNumber(row.tokens);
    if (tokens !== null) holder.tokens = tokens;
    return holder;
  }
}
