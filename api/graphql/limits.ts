// Depth and cost limits, checked during validation (before anything runs; the document's size
// limits come before validation, in prescan.ts). Depth ignores the introspection fields
// (GraphiQL's own schema query is deep). Cost: the table in cost.ts.
import { type DocumentNode, GraphQLError, type ValidationRule } from "graphql";
import depthLimit from "graphql-depth-limit";
import { createComplexityRule, fieldExtensionsEstimator } from "graphql-query-complexity";
import { type CostCaps, costEstimatorFor, MAX_COST, WORST_CASE } from "./cost.ts";

export { MAX_COST };
export const MAX_DEPTH = 12;

/** Receives the cost of the operation validated (for `extensions.cost` and the per-minute budget). */
export interface CostSink {
  cost?: number;
}

export function limitRules(
  variables: Record<string, unknown> | undefined,
  operationName: string | undefined,
  sink: CostSink,
  maxCost = MAX_COST,
  caps: CostCaps = WORST_CASE,
): ValidationRule[] {
  return [
    depthLimit(MAX_DEPTH) as unknown as ValidationRule,
    createComplexityRule({
      maximumComplexity: maxCost,
      variables,
      operationName,
      estimators: [fieldExtensionsEstimator(), costEstimatorFor(caps)],
      onComplete: (cost) => {
        sink.cost = cost;
      },
      createError: (max, actual) =>
        new GraphQLError(
          `query cost ${actual} is over the limit of ${max} points per request: ` +
            "ask for fewer nodes (first) or fewer analytics fields",
          { extensions: { code: "COST_LIMIT", cost: actual, maxCost: max } },
        ),
    }),
  ];
}

/**
 * The caller's caps for a document: its watchlist count is read only when the document names
 * `watchlistsForUser` (a catalog read no other request needs); the validation cache keys on them.
 */
export function costCapsOf(document: DocumentNode, watchlistCount: () => number): CostCaps {
  const text = document.loc?.source.body;
  return text === undefined || text.includes("watchlistsForUser") ? { watchlists: watchlistCount() } : WORST_CASE;
}
