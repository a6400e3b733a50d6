/**
 * Explicit limits for every test run in the workspace (each vitest config and each of its projects spreads
 * these). They are limits for a machine with other work on both cores, never assertions about speed: vitest's
 * 5 s default failed property tests that take 2 s on an idle machine.
 */
export const patientTimeouts = { testTimeout: 60_000, hookTimeout: 120_000 } as const;
