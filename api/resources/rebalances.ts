// A portfolio's rebalance history (an extension beyond the interface): each rebalance of the served
// snapshot's backtest, newest first, with the number held and the tickers added and removed.
import type { RebalanceChange } from "../../pipeline/store/snapshot/model.ts";
import { type Page, type PageArgs, pageOf } from "./ordering.ts";
import type { VisiblePortfolio } from "./portfolios.ts";

export type RebalanceObject = RebalanceChange;

/** One page of the rebalances, newest first; none while the snapshot has no backtest of these rules. */
export function rebalancesPage(v: VisiblePortfolio, p: PageArgs): Page<RebalanceObject> {
  const all = v.result?.rebalances ?? [];
  return pageOf([...all].reverse(), p);
}
