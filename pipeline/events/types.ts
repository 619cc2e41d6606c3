// Events a publish gives rise to, and what a subscriber receives. An event is computed once per
// publish (compute.ts); its id is a hash of the snapshot, the type and the subject, so a publish
// computed again (a retried job) gives the same ids and a delivery queue keyed by them sends no
// duplicate.
import type { WebhookEventType } from "../store/webhooks/types.ts";

export type { WebhookEventType as EventType };

/** One rating row: the date it was rated and the seven ratings. */
export interface RatingState {
  date: string;
  totalRating: number | null;
  returnRating: number | null;
  growthRating: number | null;
  riskRating: number | null;
  valuationRating: number | null;
  technicalRating: number | null;
  macroRating: number | null;
}

export interface RatingChanged {
  ticker: string;
  /** null: the ticker had no rating in the replaced snapshot. */
  previous: RatingState | null;
  current: RatingState;
}

export interface HeldStock {
  ticker: string;
  price: number;
  totalRating: number | null;
}

export interface PortfolioRebalanced {
  portfolioId: string;
  rebalanceDate: string;
  previousRebalanceDate: string | null;
  holdings: HeldStock[];
  added: string[];
  removed: string[];
}

/** A user portfolio's rebalance that failed for good (every attempt spent); nothing was published. */
export interface PortfolioFailed {
  portfolioId: string;
  /** When the change that asked for the rebalance was made (ISO); null when none is recorded. */
  requestedAt: string | null;
  failedAt: string;
  /** The error's first line, at most 500 characters. */
  reason: string;
}

export interface SnapshotPublished {
  snapshotId: string;
  previousSnapshotId: string | null;
  sourceId: string;
  createdAt: string;
  counts: Record<string, number>;
  changes: {
    ratingsChanged: number;
    portfoliosRebalanced: number;
    tickersAdded: string[];
    tickersRemoved: string[];
  };
}

interface Base<T extends WebhookEventType, D> {
  id: string;
  type: T;
  /** The new snapshot's creation time (the same for a publish computed again); portfolio.failed: the failure's. */
  timestamp: string;
  /** The snapshot published (portfolio.failed: the one served when the rebalance failed; null before any). */
  snapshot: string | null;
  data: D;
}

export type ServiceEvent =
  | Base<"rating.changed", RatingChanged>
  | Base<"portfolio.rebalanced", PortfolioRebalanced>
  | Base<"portfolio.failed", PortfolioFailed>
  | Base<"snapshot.published", SnapshotPublished>;

/** One event for one webhook, with what is the recipient's own. */
export interface Delivery {
  webhookId: string;
  eventId: string;
  /** rating.changed: the recipient's watchlists that hold the ticker (never another user's), as JSON text. */
  watchlistsJson?: string;
}
