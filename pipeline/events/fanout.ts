// Who receives which event: the events computed on `conn` (compute.ts's ev_rating, ev_portfolio)
// joined with the subscriptions and the subscribers' watchlists in one DuckDB query. A rating
// event goes to the webhooks of the users whose watchlists hold the ticker, with those users' own
// watchlist ids only; a rebalance to the portfolio's owner's; snapshot.published to every
// subscriber of it. A webhook's filters (minimum change, levels crossed) apply in the same query.

import { type Conn, columns } from "../store/duck/duck.ts";
import { appendTable } from "../store/duck/write.ts";
import type { Webhook } from "../store/webhooks/types.ts";
import type { Delivery } from "./types.ts";

/** One ticker on one of a user's watchlists. */
export interface WatchedTicker {
  userId: string;
  watchlistId: string;
  ticker: string;
}

/** The watchlists of the users named (a catalog reads them; only subscribers' are asked for). */
export type WatchSource = (userIds: string[]) => Promise<WatchedTicker[]>;

export async function fanOut(
  conn: Conn,
  subscribers: Webhook[],
  watches: WatchedTicker[],
  snapshotEventId: string,
): Promise<Delivery[]> {
  await stageSubscribers(conn, subscribers, watches);
  await conn.run(
    "create or replace table ev_ids as select row_number() over () - 1 idx, event_id from " +
      "(select event_id from ev_rating union all select event_id from ev_portfolio union all select $1)",
    [snapshotEventId],
  );
  const [ids] = (await columns(conn, "select event_id from ev_ids order by idx")) as [string[]];
  // Integers and one JSON text per row cross into JavaScript, not 200,000 ids and lists: at a night's
  // scale converting those took most of the fan-out's time.
  const [hooks, events, lists] = (await columns(
    conn,
    "with r as (select s.idx hook, e.event_id, to_json(list_sort(list(distinct w.watchlist_id)))::varchar lists " +
      "from ev_rating e join ev_watch w on w.ticker = e.ticker " +
      "join ev_subs s on s.user_id = w.user_id and s.rating " +
      "where coalesce(abs(e.total_rating - e.prev_total_rating) >= s.min_change, true) " +
      "and (not s.has_levels or exists (select 1 from ev_levels l where l.webhook_id = s.webhook_id " +
      "and (e.prev_total_rating < l.level) <> (e.total_rating < l.level))) " +
      "group by s.idx, e.event_id " +
      "union all select s.idx, e.event_id, null from ev_portfolio e " +
      "join ev_subs s on s.user_id = e.owner_id and s.portfolio " +
      "union all select s.idx, $1, null from ev_subs s where s.snapshot) " +
      "select r.hook, i.idx, r.lists from r join ev_ids i using (event_id) order by r.hook, i.idx",
    [snapshotEventId],
  )) as [number[], (number | bigint)[], (string | null)[]];
  return hooks.map((h, k) => {
    const d: Delivery = { webhookId: subscribers[h].id, eventId: ids[Number(events[k])] };
    if (lists[k] !== null) d.watchlistsJson = lists[k];
    return d;
  });
}

/** The subscribers, their level filters and their watched tickers as tables the fan-out joins. */
async function stageSubscribers(conn: Conn, subscribers: Webhook[], watches: WatchedTicker[]): Promise<void> {
  await appendTable(
    conn,
    "ev_subs",
    [
      ["idx", "integer"],
      ["webhook_id", "varchar"],
      ["user_id", "varchar"],
      ["rating", "boolean"],
      ["portfolio", "boolean"],
      ["snapshot", "boolean"],
      ["min_change", "double"],
      ["has_levels", "boolean"],
    ],
    subscribers.map((w, i) => [
      i,
      w.id,
      w.ownerId,
      w.eventTypes.includes("rating.changed"),
      w.eventTypes.includes("portfolio.rebalanced"),
      w.eventTypes.includes("snapshot.published"),
      w.filters.minTotalChange ?? null,
      Boolean(w.filters.levels?.length),
    ]),
  );
  await appendTable(
    conn,
    "ev_levels",
    [
      ["webhook_id", "varchar"],
      ["level", "double"],
    ],
    subscribers.flatMap((w) => (w.filters.levels ?? []).map((l) => [w.id, l])),
  );
  await appendTable(
    conn,
    "ev_watch",
    [
      ["user_id", "varchar"],
      ["watchlist_id", "varchar"],
      ["ticker", "varchar"],
    ],
    watches.map((w) => [w.userId, w.watchlistId, w.ticker.toUpperCase()]),
  );
}
