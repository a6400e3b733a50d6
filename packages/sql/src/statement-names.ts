import { describeValue } from "./describe-value.js";

/**
 * Names for Postgres prepared statements, derived from the statement text: the same text gets the same name
 * in every adapter and on every pooled connection, so each connection parses it once (the server keeps it
 * for the connection's life), and a text never gets a name another text already has.
 *
 * A connection keeps every statement prepared on it until it closes, and node-postgres cannot forget one,
 * so the names are bounded: the first `maximumNamedTexts` distinct texts of the process get one; any text
 * after them is sent unnamed (parsed per call, as without naming). Our stores send a few dozen texts; a text
 * per IN-list length or per query length is what the bound is for.
 */
export const maximumNamedTexts = 500;

/** The `namedStatements` option of an adapter: `true` when left out; anything but a boolean is refused. */
export function namedStatementsOption(value: unknown, adapter: string): boolean {
  if (value === undefined) return true;
  if (typeof value !== "boolean") {
    throw new TypeError(`${adapter}: namedStatements must be true or false, got ${describeValue(value)}`);
  }
  return value;
}

/** Text → name, and name → text to refuse a second text with the same name. */
const namesByText = new Map<string, string>();
const textsByName = new Map<string, string>();

/** The prepared statement name of `text`, or `undefined` when it is sent unnamed. */
export function statementName(text: string): string | undefined {
  const known = namesByText.get(text);
  if (known !== undefined) return known;
  if (namesByText.size >= maximumNamedTexts) return undefined;
  const name = `cb_${textHash(text)}_${text.length}`;
  // Two texts with one hash and one length: the later one goes unnamed rather than run the other's plan.
  if (textsByName.has(name)) return undefined;
  namesByText.set(text, name);
  textsByName.set(name, text);
  return name;
}

/**
 * A 64-bit FNV-1a hash of the text's UTF-16 code units, as 16 hex digits (two 32-bit halves, so no BigInt
 * on the hot path). Not a security measure: collisions are refused above.
 */
function textHash(text: string): string {
  let high = 0xcbf29ce4;
  let low = 0x84222325;
  for (let index = 0; index < text.length; index++) {
    low = (low ^ text.charCodeAt(index)) >>> 0;
    // Multiply the 64-bit value (high, low) by the FNV prime 2^40 + 0x1b3, modulo 2^64.
    const lowTimes = low * 0x1b3;
    const carry = Math.floor(lowTimes / 0x1_0000_0000);
    high = (high * 0x1b3 + (low << 8) + carry) >>> 0;
    low = lowTimes >>> 0;
  }
  return high.toString(16).padStart(8, "0") + low.toString(16).padStart(8, "0");
}
