// A portfolio's rebalance history from the snapshot's `holdings` table, which keeps the selection
// of every rebalance (kind `rebalance`, one row per held stock × date): per date the number held
// and the tickers that entered or left against the rebalance before it; with the turnover and cost
// of each from the `portfolio_turnover` table.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Binds, type Conn, columns } from "../duck/duck.ts";
import type { RebalanceChange } from "../snapshot/model.ts";

/** Each portfolio's rebalances: date → [turnover, cost]. */
export type TurnoverById = Map<string, Map<string, [number, number]>>;

/** The snapshot's turnover rows (`id`: one portfolio's); none in a snapshot from before costs existed. */
export async function readTurnover(conn: Conn, dir: string, id?: string): Promise<TurnoverById> {
  const out: TurnoverById = new Map();
  const file = join(dir, "portfolio_turnover.parquet");
  if (!existsSync(file)) return out;
  const b = new Binds();
  const [ids = [], dates = [], turnover = [], cost = []] = (await columns(
    conn,
    `select id, strftime(date, '%Y-%m-%d'), turnover, cost from read_parquet(${b.v(file)}) ` +
      (id === undefined ? "" : `where id = ${b.v(id)}`),
    b.params,
  )) as [string[], string[], number[], number[]];
  ids.forEach((pid, i) => {
    if (!out.has(pid)) out.set(pid, new Map());
    out.get(pid)!.set(dates[i], [turnover[i], cost[i]]);
  });
  return out;
}

/**
 * Rebalances ascending by date; the first one's `added` is its whole selection. Turnover and cost
 * are null where the snapshot has none (it predates them).
 */
export function rebalanceHistory(
  byDate: ReadonlyMap<string, readonly { ticker: string }[]> | undefined,
  turnover?: ReadonlyMap<string, [number, number]>,
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
      turnover: turnover?.get(date)?.[0] ?? null,
      cost: turnover?.get(date)?.[1] ?? null,
    });
    before = now;
  }
  return out;
}
