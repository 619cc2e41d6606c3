// Per-request batch readers (DataLoader): fields resolved once per node of a page (a stock's
// latest rating, its financials, stored metric rows) are collected during one tick and read with
// one accessor call, so a page of 200 nodes is one read, not 200. Made per request: the cache
// never outlives the snapshot the request read.
import DataLoader from "dataloader";
import type { BenchmarkResult, CompanyFinancials } from "../../pipeline/store/snapshot/model.ts";
import type { Company, MetricRow, RatingRow, ReturnSeries } from "../../pipeline/types.ts";
import type { SnapshotRef } from "./snapshot-access.ts";
import * as snapshotAccess from "./snapshot-access.ts";

export type Access = typeof snapshotAccess;

/** Groups keys "a|b" by their first part, runs one call per group, answers in key order. */
async function grouped<V>(
  keys: readonly string[],
  run: (group: string, ids: string[]) => Promise<(V | undefined)[]>,
): Promise<(V | undefined)[]> {
  const groups = new Map<string, number[]>();
  keys.forEach((k, i) => {
    const g = k.slice(0, k.indexOf("|"));
    groups.set(g, [...(groups.get(g) ?? []), i]);
  });
  const out = new Array<V | undefined>(keys.length);
  await Promise.all(
    [...groups].map(async ([g, idx]) => {
      const vals = await run(
        g,
        idx.map((i) => keys[i].slice(keys[i].indexOf("|") + 1)),
      );
      idx.forEach((i, j) => {
        out[i] = vals[j];
      });
    }),
  );
  return out;
}

export function createBatchReaders(s: SnapshotRef, access: Access = snapshotAccess) {
  const company = new DataLoader<string, Company | undefined>((tickers) => access.companiesByTicker(s, tickers));
  /** key `date|TICKER` (date empty = latest) */
  const ratingAsOf = new DataLoader<string, RatingRow | undefined>((keys) =>
    grouped(keys, (date, tickers) => access.ratingsAsOf(s, tickers, date || undefined)),
  );
  const financials = new DataLoader<string, CompanyFinancials | undefined>((tickers) =>
    access.financialsOf(s, tickers),
  );
  /** key `kind:benchmarkId|id` */
  const metrics = new DataLoader<string, MetricRow[] | undefined>((keys) =>
    grouped(keys, (g, ids) => {
      const [kind, bench] = g.split(":");
      return access.storedMetrics(s, kind as "stock" | "portfolio", ids, bench || null);
    }),
  );
  const returns = new DataLoader<string, ReturnSeries>(async (tickers) =>
    Promise.all(tickers.map((t) => access.stockReturns(s, t))),
  );
  return {
    company: (ticker: string) => company.load(ticker.toUpperCase()),
    ratingAsOf: (ticker: string, date?: string) => ratingAsOf.load(`${date ?? ""}|${ticker.toUpperCase()}`),
    financials: (ticker: string) => financials.load(ticker),
    storedMetrics: (kind: "stock" | "portfolio", id: string, bench: BenchmarkResult | undefined) =>
      metrics.load(`${kind}:${bench?.id ?? ""}|${id}`),
    stockReturns: (ticker: string) => returns.load(ticker),
  };
}
export type BatchReaders = ReturnType<typeof createBatchReaders>;
