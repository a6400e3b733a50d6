/** The instrumentation scope of the spans this package makes. */
export const INSTRUMENTATION_NAME = "@contextblocks/otel";
