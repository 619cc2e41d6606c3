// Depth and cost limits, checked during validation (before anything runs; the document's size
// limits come before validation, in prescan.ts). Depth ignores the introspection fields
// (GraphiQL's own schema query is deep). Cost: the table in cost.ts.
import { GraphQLError, type ValidationRule } from "graphql";
import depthLimit from "graphql-depth-limit";
import { createComplexityRule, fieldExtensionsEstimator } from "graphql-query-complexity";
import { costEstimator, MAX_COST } from "./cost.ts";

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
): ValidationRule[] {
  return [
    depthLimit(MAX_DEPTH) as unknown as ValidationRule,
    createComplexityRule({
      maximumComplexity: maxCost,
      variables,
      operationName,
      estimators: [fieldExtensionsEstimator(), costEstimator],
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
