import { type Span, trace } from "@opentelemetry/api";
import { quietly } from "./quietly.js";

/**
 * What a storage layer reports after each statement: `@contextblocks/sql`'s `StatementReport` (declared here
 * by shape, so this package imports no storage). Durable Object cursors report `rowsRead` / `rowsWritten`
 * (the figures Cloudflare bills); better-sqlite3 reports `changes`; pg reports its `rowCount` as `changes`.
 */
export interface RowReport {
  readonly rowsRead?: number | undefined;
  readonly rowsWritten?: number | undefined;
  readonly changes?: number | undefined;
}

/** The span attributes the row counts go to (no OpenTelemetry convention names these yet). */
export const ROW_ATTRIBUTES = {
  statements: "contextblocks.db.statements",
  rowsRead: "contextblocks.db.rows_read",
  rowsWritten: "contextblocks.db.rows_written",
  rowsChanged: "contextblocks.db.rows_changed",
} as const;

interface Totals {
  statements: number;
  rowsRead: number | undefined;
  rowsWritten: number | undefined;
  rowsChanged: number | undefined;
}

/** The spans `otelTracer` made that are still collecting rows, with their totals so far. */
const totals = new WeakMap<Span, Totals>();

/** Called by `otelTracer` for each span it starts: statements run while it is active count towards it. */
export function countRowsOn(span: Span): void {
  totals.set(span, {
    statements: 0,
    rowsRead: undefined,
    rowsWritten: undefined,
    rowsChanged: undefined,
  });
}

const add = (sum: number | undefined, value: number | undefined) =>
  value === undefined ? sum : (sum ?? 0) + value;

/**
 * A statement observer (pass it as `onStatement` to a store or a `SqlClient` adapter) that adds each
 * statement's rows to the active contextblocks span: `contextblocks.db.statements`, and
 * `contextblocks.db.rows_read` / `rows_written` / `rows_changed` where the storage reports them (sums over
 * the span's statements). A statement outside a contextblocks span (or with no context manager, so no
 * active span) is left alone; other libraries' spans never get these attributes.
 *
 * ```ts
 * const backend = sqliteBackend(ctx.storage, { onStatement: recordStatementRows });
 * ```
 */
export function recordStatementRows(report: RowReport): void {
  // Called by storage between statements: a span that throws must not fail (or roll back) the write.
  quietly("recording statement rows", () => addRows(report));
}

function addRows(report: RowReport): void {
  const span = trace.getActiveSpan();
  if (span === undefined) return;
  const sum = totals.get(span);
  if (sum === undefined) return;
  sum.statements += 1;
  sum.rowsRead = add(sum.rowsRead, report.rowsRead);
  sum.rowsWritten = add(sum.rowsWritten, report.rowsWritten);
  sum.rowsChanged = add(sum.rowsChanged, report.changes);
  span.setAttribute(ROW_ATTRIBUTES.statements, sum.statements);
  if (sum.rowsRead !== undefined) span.setAttribute(ROW_ATTRIBUTES.rowsRead, sum.rowsRead);
  if (sum.rowsWritten !== undefined) span.setAttribute(ROW_ATTRIBUTES.rowsWritten, sum.rowsWritten);
  if (sum.rowsChanged !== undefined) span.setAttribute(ROW_ATTRIBUTES.rowsChanged, sum.rowsChanged);
}
