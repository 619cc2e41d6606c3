// Two hand-made snapshot folders (the tables events read: meta.json, ratings_latest, holdings,
// portfolios, companies), written with DuckDB from literal rows, so every expected event below is
// read off these rows by hand.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDuck } from "../../pipeline/store/duck/duck.ts";
import { appendTable } from "../../pipeline/store/duck/write.ts";

type Rating = [ticker: string, date: string, total: number, sub?: number];
type Holding = [portfolio: string, date: string, ticker: string, price: number, total: number];

export interface SnapshotRows {
  id: string;
  tickers: string[];
  ratings: Rating[];
  holdings: Holding[];
  /** portfolio id → owner (null: predefined) */
  owners: Record<string, string | null>;
}

const R = ["total_rating", "return_rating", "growth_rating", "risk_rating", "valuation_rating", "technical_rating"];

export async function writeSnapshot(root: string, s: SnapshotRows): Promise<string> {
  const dir = join(root, s.id);
  mkdirSync(dir, { recursive: true });
  const db = await openDuck();
  const c = db.conn;
  const out = (t: string) => c.run(`copy ${t} to '${join(dir, `${t}.parquet`)}' (format parquet)`);
  try {
    await appendTable(
      c,
      "ratings_latest",
      [
        ["date", "date"],
        ["ticker", "varchar"],
        ...R.map((k) => [k, "double"] as [string, "double"]),
        ["macro_rating", "double"],
      ],
      s.ratings.map(([t, d, total, sub]) => [d, t, total, sub ?? 3, 3, 3, 3, 3, 3]),
    );
    await c.run("create or replace table ratings_latest as select * replace (date::date as date) from ratings_latest");
    await appendTable(
      c,
      "holdings",
      [
        ["portfolio_id", "varchar"],
        ["kind", "varchar"],
        ["date", "date"],
        ["ticker", "varchar"],
        ["price", "double"],
        ["total_rating", "double"],
      ],
      s.holdings.map(([p, d, t, price, total]) => [p, "rebalance", d, t, price, total]),
    );
    await c.run("create or replace table holdings as select * replace (date::date as date) from holdings");
    await appendTable(
      c,
      "portfolios",
      [
        ["id", "varchar"],
        ["owner_id", "varchar"],
      ],
      Object.entries(s.owners),
    );
    await appendTable(
      c,
      "companies",
      [
        ["id", "varchar"],
        ["ticker", "varchar"],
        ["name", "varchar"],
      ],
      s.tickers.map((t, i) => [String(i + 1), t, `${t} Inc.`]),
    );
    for (const t of ["ratings_latest", "holdings", "portfolios", "companies"]) await out(t);
  } finally {
    db.close();
  }
  const meta = { id: s.id, createdAt: `${s.id}T02:00:00.000Z`, sourceId: `src-${s.id}`, sourceDir: "/x" };
  writeFileSync(
    join(dir, "meta.json"),
    JSON.stringify({ ...meta, lastPriceDate: "2024-02-29", counts: { companies: s.tickers.length }, timingsMs: {} }),
  );
  return dir;
}

export const tmp = (p: string) => mkdtempSync(join(tmpdir(), p));
