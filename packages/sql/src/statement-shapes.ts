import type { SqlStatement, SqlValue } from "./types.js";

/**
 * A statement whose text depends on a few settings (a `key` the caller writes) and whose bound values are a
 * few named ones, built once per key and then given each call's values: building a long statement from
 * fragments, writing its text and hashing it to find its prepared statement cost a search more than the rest
 * of its JavaScript. The statement a key keeps is the one `build` gave, its parts array reused, so adapters
 * find its text (`statementText`) and prepared statement at once.
 *
 * `build` must bind the named values as given (never a value computed from one, never one in its text) and
 * decide its text from what the key says and which values are absent (`undefined`) alone. A build that binds
 * anything else is run on every call.
 */
export type StatementShapes<Values extends Record<string, SqlValue | undefined>> = (
  key: string,
  values: Values,
  build: (values: Values) => SqlStatement,
) => SqlStatement;

/** How the statement of a key is made: its parts, and which named value each bound value is. */
interface Shape {
  readonly strings: readonly string[];
  readonly names: readonly string[];
}

/** Marks a named value in the one build that finds the shape; never in a statement that is run. */
const markerPrefix = "\u0000statement shape value ";

/**
 * One cache of statement shapes (`StatementShapes`), for one kind of statement: its keys are its own. At most
 * `limit` keys are kept; when a new one would pass it, all are forgotten (keys come from settings, which take
 * few values).
 */
export function statementShapes<Values extends Record<string, SqlValue | undefined>>(
  limit = 64,
): StatementShapes<Values> {
  const shapes = new Map<string, Shape | null>();
  return (key, values, build) => {
    // Which values are absent is part of the key: a build may leave out a clause for one.
    let full = `${key}\u0000`;
    for (const name in values) full += values[name] === undefined ? "0" : "1";
    let shape = shapes.get(full);
    if (shape === undefined) {
      shape = shapeOf(values, build);
      if (shapes.size >= limit) shapes.clear();
      shapes.set(full, shape);
    }
    if (shape === null) return build(values);
    const bound: SqlValue[] = shape.names.map((name) => values[name] as SqlValue);
    return Object.freeze({ strings: shape.strings, values: Object.freeze(bound) });
  };
}

/** The shape `build` gives with markers in place of the values; `null` when it binds anything else. */
function shapeOf<Values extends Record<string, SqlValue | undefined>>(
  values: Values,
  build: (values: Values) => SqlStatement,
): Shape | null {
  const markers: Record<string, SqlValue | undefined> = {};
  const byMarker = new Map<SqlValue, string>();
  for (const [name, value] of Object.entries(values)) {
    // An absent value stays absent: the build may leave a clause out for it, as the key says.
    if (value === undefined) {
      markers[name] = undefined;
      continue;
    }
    const marker = `${markerPrefix}${byMarker.size}\u0000`;
    markers[name] = marker;
    byMarker.set(marker, name);
  }
  const statement = build(markers as Values);
  const names: string[] = [];
  for (const value of statement.values) {
    const name = byMarker.get(value);
    if (name === undefined) return null;
    names.push(name);
  }
  if (statement.strings.some((part) => part.includes(markerPrefix))) return null;
  return {
    strings: Object.isFrozen(statement.strings) ? statement.strings : Object.freeze([...statement.strings]),
    names,
  };
}
