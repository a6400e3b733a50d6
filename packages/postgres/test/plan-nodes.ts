/** A node of `EXPLAIN (FORMAT JSON)`'s plan, with what the plan tests read of it. */
export interface PlanNode {
  "Node Type": string;
  "CTE Name"?: string;
  /** A CTE's node names it `CTE <name>`. */
  "Subplan Name"?: string;
  /** The node's output columns (`EXPLAIN (VERBOSE)` only). */
  Output?: string[];
  "Index Name"?: string;
  "Relation Name"?: string;
  "Actual Loops"?: number;
  "Actual Rows"?: number;
  /** Per loop, as the other actual counts. */
  "Rows Removed by Filter"?: number;
  "Rows Removed by Join Filter"?: number;
  Plans?: PlanNode[];
}

/** The node and every node below it, depth first. */
export function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

/** The rows a plan's nodes produced or filtered away, every loop counted: what it compared, in all. */
export function rowsHandled(nodes: readonly PlanNode[]): number {
  return nodes.reduce(
    (sum, node) =>
      sum +
      ((node["Actual Rows"] ?? 0) +
        (node["Rows Removed by Filter"] ?? 0) +
        (node["Rows Removed by Join Filter"] ?? 0)) *
        (node["Actual Loops"] ?? 1),
    0,
  );
}
