// Small questions about a published snapshot answered by one DuckDB query over its Parquet files,
// for start-up paths that must not load the snapshot (at 5,000 × 25 the in-memory loader grows to
// gigabytes). Paths and ids are bound parameters.
import { join } from "node:path";
import { listValue } from "@duckdb/node-api";
import type { Company } from "../../types.ts";
import { openDuck } from "../duck/duck.ts";
import { snapshotDir } from "../snapshot/snapshots.ts";
import { loadCompanies } from "./frame-reads.ts";

/** The published rules (JSON text) of those of `ids` the snapshot holds a backtest of. */
export async function publishedRules(dataDir: string, snapshotId: string, ids: string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const db = await openDuck(":memory:", { threads: "1" });
  try {
    const r = await db.conn.runAndReadAll("select id, rules from read_parquet($path) where list_contains($ids, id)", {
      path: join(snapshotDir(dataDir, snapshotId), "portfolios.parquet"),
      ids: listValue(ids),
    });
    return new Map((r.getRowsJS() as [string, string][]).map(([id, rules]) => [id, rules]));
  } finally {
    db.close();
  }
}

/** The snapshot's companies (one row per stock: thousands, not the snapshot's millions of rows). */
export async function publishedCompanies(dataDir: string, snapshotId: string): Promise<Company[]> {
  const db = await openDuck(":memory:", { threads: "1" });
  try {
    await db.conn.run("create table companies as select * from read_parquet($1)", [
      join(snapshotDir(dataDir, snapshotId), "companies.parquet"),
    ]);
    return await loadCompanies(db.conn);
  } finally {
    db.close();
  }
}
