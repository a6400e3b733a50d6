/** A node of `EXPLAIN (FORMAT JSON)`'s plan, with what the plan tests read of it. */
export interface PlanNode {
  "Node Type": string;
  "CTE Name"?: string;
  "Index Name"?: string;
  "Relation Name"?: string;
  "Actual Loops"?: number;
  "Actual Rows"?: number;
  /** Per loop, as the other actual counts. */
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}

/** The node and every node below it, depth first. */
export function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}
