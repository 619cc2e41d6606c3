// Depth and cost limits, checked during validation (before anything runs). Depth ignores the
// introspection fields (GraphiQL's own schema query is deep). Cost: 1 per field, a connection
// multiplies its selection by `first`, metrics and performance weigh ANALYTICS_COST each.

import { GraphQLError, type ValidationRule } from "graphql";
import depthLimit from "graphql-depth-limit";
import { createComplexityRule, fieldExtensionsEstimator, simpleEstimator } from "graphql-query-complexity";

export const MAX_DEPTH = 12;
export const MAX_COST = 20_000;

export function limitRules(
  variables: Record<string, unknown> | undefined,
  operationName: string | undefined,
): ValidationRule[] {
  return [
    depthLimit(MAX_DEPTH) as unknown as ValidationRule,
    createComplexityRule({
      maximumComplexity: MAX_COST,
      variables,
      operationName,
      estimators: [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })],
      createError: (max, actual) =>
        new GraphQLError(
          `query cost ${actual} is over the limit of ${max}: ask for fewer nodes (first) or fewer analytics fields`,
          {
            extensions: { code: "COST_LIMIT", cost: actual, maxCost: max },
          },
        ),
    }),
  ];
}
