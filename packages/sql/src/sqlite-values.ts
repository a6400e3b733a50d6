import type { SqlValue } from "./types.js";

/** SQLite has no boolean type: bind `true`/`false` as 1/0, as SQLite itself stores them. */
export function booleanAsInteger(value: SqlValue): Exclude<SqlValue, boolean> {
  return typeof value === "boolean" ? (value ? 1 : 0) : value;
}

/**
 * Values as a Durable Object's `sql.exec` takes them (string, number, ArrayBuffer, null): booleans as 1/0,
 * bigints as numbers when exactly representable, byte arrays as an `ArrayBuffer` copy of their bytes.
 */
export function toDurableObjectValue(value: SqlValue): string | number | ArrayBuffer | null {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "bigint") {
    const number = Number(value);
    if (!Number.isSafeInteger(number)) {
      throw new RangeError(`sql: bigint ${value} is outside the range a Durable Object can bind exactly`);
    }
    return number;
  }
  if (value instanceof Uint8Array) {
    return value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength) as ArrayBuffer;
  }
  return value;
}
