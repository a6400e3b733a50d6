// The suite is compiled without Node or DOM types (it runs in workerd too); timers exist in both runtimes.
declare function setTimeout(callback: () => void, milliseconds?: number): unknown;

/** How the writes of one concurrency round are started relative to each other. */
export interface Schedule {
  /** For failure messages: which round and scheduling lost data. */
  name: string;
  /** Resolves when write `index` may start. */
  before(index: number): Promise<void> | undefined;
}

/** Rounds each concurrency check runs by default. */
export const DEFAULT_CONCURRENCY_ROUNDS = 16;

/**
 * mulberry32: a small seeded generator, so a failing round can be named and run again with the same
 * delays. Returns numbers in [0, 1).
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
}

async function microtasks(count: number): Promise<void> {
  for (let turn = 0; turn < count; turn++) await Promise.resolve();
}

function timer(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

/**
 * The schedules of `rounds` rounds, cycling through: every write started in the same tick; writes
 * staggered by microtasks; writes staggered by timers; and seeded random mixes of the three. A provider
 * whose read-modify-write is not atomic loses data in at least one of them, whatever its own timing.
 */
export function concurrencySchedules(rounds: number): Schedule[] {
  const schedules: Schedule[] = [];
  for (let round = 0; round < rounds; round++) {
    const label = `round ${round + 1} of ${rounds}`;
    switch (round % 4) {
      case 0:
        schedules.push({ name: `${label}, all started in one tick`, before: () => undefined });
        break;
      case 1:
        schedules.push({ name: `${label}, staggered by microtasks`, before: (index) => microtasks(index) });
        break;
      case 2:
        schedules.push({ name: `${label}, staggered by timers`, before: (index) => timer(index % 3) });
        break;
      default: {
        const seed = 0x5eed + round;
        const random = seededRandom(seed);
        const plan: (() => Promise<void> | undefined)[] = [];
        schedules.push({
          name: `${label}, seeded random delays (seed ${seed})`,
          before: (index) => {
            while (plan.length <= index) {
              const pick = random();
              const amount = Math.floor(random() * 4);
              plan.push(
                pick < 0.34
                  ? () => undefined
                  : pick < 0.67
                    ? () => microtasks(amount + 1)
                    : () => timer(amount),
              );
            }
            return plan[index]?.();
          },
        });
      }
    }
  }
  return schedules;
}

/** Starts `count` writes under `schedule` and waits for all of them. */
export async function startConcurrently(
  count: number,
  schedule: Schedule,
  write: (index: number) => Promise<unknown>,
): Promise<void> {
  await Promise.all(
    Array.from({ length: count }, (_, index) => {
      const waiting = schedule.before(index);
      return waiting === undefined ? write(index) : waiting.then(() => write(index));
    }),
  );
}
