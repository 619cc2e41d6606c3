// All fifteen REST endpoints of interface §4.2, in one list (routing and the OpenAPI document).
import { benchmarksRoutes } from "./benchmarks.ts";
import { portfolioRebalancesRoutes } from "./portfolio-rebalances.ts";
import { portfoliosRoutes } from "./portfolios.ts";
import { ratingEvidenceRoutes } from "./rating-evidence.ts";
import type { AnyRoute } from "./route.ts";
import { stockAnalyticsRoutes } from "./stock-analytics.ts";
import { stockFinancialsRoutes } from "./stock-financials.ts";
import { stockRatingsRoutes } from "./stock-ratings.ts";
import { watchlistsRoutes } from "./watchlists.ts";

export const REST_ROUTES: AnyRoute[] = [
  ...stockRatingsRoutes,
  ...stockFinancialsRoutes,
  ...stockAnalyticsRoutes,
  ...portfoliosRoutes,
  ...watchlistsRoutes,
  ...benchmarksRoutes,
  ...portfolioRebalancesRoutes, // an extension beyond the interface (docs/api/rest.md)
  ...ratingEvidenceRoutes, // an extension: what the ratings predicted (docs/api/rest.md)
];
