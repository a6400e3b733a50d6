import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * A full garbage collection, run before each timed batch of both systems alike, so the garbage the untimed
 * preparation (and earlier batches) left is not collected inside the timed part and charged to whichever
 * system happens to be timed next. Node's `gc()` (as `--expose-gc` gives it), obtained at run time so the
 * benches need no extra flag. What a system allocates while it is timed is still collected inside its own
 * timing whenever it fills the young generation, as in production.
 */
export const collectGarbage: () => void = (() => {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === "function") return exposed;
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
})();
