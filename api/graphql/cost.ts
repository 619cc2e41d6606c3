// What a query costs, computed from the document before it runs (graphql-query-complexity, with
// the estimator below). One point is about 0.1 ms of server time or 1 KB of response, whichever
// a field takes more of, measured by `npm run bench -- graphql-limits` (500 stocks, 15 years of
// daily returns; the three financials made the size of a SimFin company's annual statements):
//
//   field (per instance)                           measured           points
//   a list node (stockRatings page of 100)         0.14 ms, 0.7 KB    1 per object field in it
//   stock(ticker), rating, any object field        0.2 ms, <0.1 KB    1 (scalars 0)
//   connection (first = n)                         n × node           1 + n × the node's selection
//   financials(type) (22 years × 104 items)        69 ms, 145 KB      700
//   metrics (stored rows)                          1.7 ms, 5.5 KB     20
//   metrics(period) (computed)                     4.3 ms, 5.2 KB     50
//   performance, daily series: CUMULATIVE_RETURN   96 ms, 1,531 KB    1,500
//     DRAWDOWN 56 ms 1,523 KB, ROLLING_VOLATILITY 70 ms 1,487 KB, ROLLING_SHARPE 71 ms 1,476 KB,
//     ROLLING_BETA 52 ms 1,453 KB
//   performance(MONTHLY_HEATMAP)                   3.6 ms, 70 KB      75
//   performance(HISTOGRAM)                         6.7 ms, 74 KB      75
//   performance(YEARLY_RETURNS)                    (yearly points)    75
//   performance(BOXPLOT)                           2.6 ms, 3.2 KB     30
//   watchlistsForUser                              the caller's list  1 + (its watchlists, at most 200)
//                                                                      × a watchlist's selection
//
// The analytics fields' figures include their whole selection (every point field), so their
// sub-selections add nothing. Series grow with the history served: 15 years is the longest the
// service is benchmarked at, so the points hold for the real source's 5 years with room.
import { type GraphQLField, getNamedType, isLeafType } from "graphql";
import type { ComplexityEstimator } from "graphql-query-complexity";

/** Points of a request at most (over it: 400, code COST_LIMIT). */
export const MAX_COST = 5000;
/** Points one api key may spend per minute over all its GraphQL requests (over it: 429). */
export const COST_PER_MINUTE = 50_000;
/** Execution time of one request, ms (the worst document the cost limit admits takes well under 1 s). */
export const TIMEOUT_MS = 5000;
/** Bytes of one answer (the worst the cost limit admits is about 4.5 MB: three daily series). */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

const SERIES_COST: Record<string, number> = {
  cumulative_return: 1500,
  drawdown: 1500,
  rolling_beta: 1500,
  rolling_volatility: 1500,
  rolling_sharpe: 1500,
  monthly_heatmap: 75,
  histogram: 75,
  yearly_returns: 75,
  boxplot: 30,
};
/** Watchlists a user may hold (the catalog refuses more). */
export const MAX_WATCHLISTS = 200;

/**
 * What a request's lists hold for its caller: `watchlistsForUser` is costed by the caller's own
 * count (a list of 200 for everyone refused an ordinary read of a few), never above the cap.
 */
export interface CostCaps {
  watchlists: number;
}
export const WORST_CASE: CostCaps = { watchlists: MAX_WATCHLISTS };

type Args = Record<string, unknown>;
/** Points of the costly fields by name (on StockType and PortfolioNode alike), their selection included. */
const FIELD_COST: Record<string, (args: Args, child: number, caps: CostCaps) => number> = {
  financials: () => 700,
  // one read of the stock's components row (rating_components.parquet) per rating
  components: () => 10,
  metrics: (a) => (a.period == null ? 20 : 50),
  performance: (a) => SERIES_COST[String(a.type ?? "cumulative_return")] ?? 1500,
  watchlistsForUser: (_a, child, caps) => 1 + Math.min(Math.max(caps.watchlists, 0), MAX_WATCHLISTS) * child,
};

/** A field's points as the table above says; connections carry their own (relay.ts connectionCost). */
export const costEstimatorFor =
  (caps: CostCaps): ComplexityEstimator =>
  ({ field, args, childComplexity }) => {
    const named = FIELD_COST[(field as GraphQLField<unknown, unknown>).name];
    if (named) return named(args, childComplexity, caps);
    return isLeafType(getNamedType((field as GraphQLField<unknown, unknown>).type)) ? 0 : 1 + childComplexity;
  };

/** The cost line each field's schema description carries (the document's reader sees the table there). */
export function costNote(field: string): string {
  switch (field) {
    case "financials":
      return "Cost: 700 points.";
    case "components":
      return "Cost: 10 points.";
    case "metrics":
      return "Cost: 20 points; 50 with `period` (computed on request).";
    case "performance":
      return (
        "Cost: 1,500 points for the daily series (CUMULATIVE_RETURN, DRAWDOWN, ROLLING_*), " +
        "75 for MONTHLY_HEATMAP, HISTOGRAM and YEARLY_RETURNS, 30 for BOXPLOT."
      );
    case "watchlistsForUser":
      return (
        "Cost: 1 + the caller's number of watchlists × the points of a watchlist's selection " +
        `(a user may have ${MAX_WATCHLISTS}).`
      );
    default:
      return "";
  }
}
