// A portfolio's rebalance history from the snapshot's `holdings` table, which keeps the selection
// of every rebalance (kind `rebalance`, one row per held stock × date): per date the number held
// and the tickers that entered or left against the rebalance before it.
import type { RebalanceChange } from "../snapshot/model.ts";

/** Rebalances ascending by date; the first one's `added` is its whole selection. */
export function rebalanceHistory(
  byDate: ReadonlyMap<string, readonly { ticker: string }[]> | undefined,
): RebalanceChange[] {
  if (!byDate) return [];
  const out: RebalanceChange[] = [];
  let before = new Set<string>();
  for (const date of [...byDate.keys()].sort()) {
    const now = new Set(byDate.get(date)!.map((h) => h.ticker));
    out.push({
      date,
      holdingsCount: now.size,
      added: [...now].filter((t) => !before.has(t)).sort(),
      removed: [...before].filter((t) => !now.has(t)).sort(),
    });
    before = now;
  }
  return out;
}
