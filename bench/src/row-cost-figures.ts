/** What the row-cost test (in workerd) hands to the Node side: rows read and written per operation. */

/** Billed rows of one operation (sums of the Durable Object cursors' `rowsRead` / `rowsWritten`). */
export interface RowCost {
  read: number;
  written: number;
}

export interface RowCostRow {
  /** "10 blocks", "1,000 entries", … */
  group: string;
  operation: string;
  contextblocks: RowCost;
  agents: RowCost;
  /** Context for the figures (for search: how many matches each system returned). */
  note?: string;
}

/** One system's measurement of one operation. */
export interface MeasuredOperation {
  operation: string;
  cost: RowCost;
  /** For search: mean number of matches returned per query. */
  matches?: number;
}

export interface RowCostFigures {
  rows: RowCostRow[];
}
