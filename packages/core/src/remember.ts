/**
 * Keeps the promise `start()` returns so every caller shares one attempt, and forgets it when it fails so
 * the next caller tries again. `get` answers the kept promise or starts one.
 */
export function rememberUntilFailure<T>(start: () => Promise<T>): () => Promise<T> {
  let kept: Promise<T> | undefined;
  return () => {
    if (kept) return kept;
    const attempt = start();
    kept = attempt;
    attempt.catch(() => {
      if (kept === attempt) kept = undefined;
    });
    return attempt;
  };
}
