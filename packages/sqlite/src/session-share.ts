/**
 * Whether one session's search may rank the whole index: true while the session held every search row when
 * last searched (one conversation per database, the usual case). The search then ranks without filtering by
 * session (`sort: "bm25"`, message-search.ts) or without the session's token (where FTS5 sorts,
 * search-in-steps.ts) and checks the best rows are the session's; when one is not, it searches again filtered
 * and says so here (`notAlone`), and the next `retryEvery` searches go filtered straight away before the whole
 * index is tried again (another session may have been deleted meanwhile).
 */
export class SessionShare {
  #filteredLeft = 0;

  constructor(private readonly retryEvery = 16) {}

  /** Whether the next search ranks the whole index (and checks its rows), or filters by session. */
  tryAlone(): boolean {
    if (this.#filteredLeft === 0) return true;
    this.#filteredLeft--;
    return false;
  }

  /** A search found another session's rows among the best. */
  notAlone(): void {
    this.#filteredLeft = this.retryEvery;
  }
}
