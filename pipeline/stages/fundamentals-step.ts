// The fundamentals' step of a full run (pipeline/run/plan.ts): step 1b, beside ingest, splits the
// fundamentals by ticker range of the companies for the financials partitions (or reuses the
// published tables); and the checks the partitions and the publish make on what it left.

import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { splitFundamentals } from "../sources/fundamentals-split.ts";
import { stageCompanies } from "../sources/index.ts";
import { FINANCIAL_DIRS } from "../store/snapshot/financial-tables.ts";
import { readStagingRecord, stagingLayout, writeStagingRecord } from "../store/snapshot/staging-layout.ts";
import type { StageContext } from "./context.ts";
import { fundamentalsInputId, knownTickers, reusePublished } from "./ingest.ts";
import { boundsOf, partFile, sortedKeys, tickerRanges } from "./partitions.ts";

export const financialsDone = (out: string, part: number) =>
  FINANCIAL_DIRS.every((t) => existsSync(join(out, t, partFile(part))));

const splitDir = (out: string) => stagingLayout(out).fundamentalsSplit;
/** The fundamentals slice of financials partition `part` (written by flowFundamentalsStep). */
export const financialsSlice = (out: string, part: number) => join(splitDir(out), `part-${part}`);

/**
 * Step 1b, beside ingest: the fundamentals split by ticker range of the companies (the ranges the
 * in-process runner uses), one slice per financials partition; or, when they are byte-identical to
 * the published snapshot's, its financial tables hard-linked (0 partitions). Returns the number of
 * partitions. `ctx.conn` gets only the companies table.
 */
export async function flowFundamentalsStep(
  ctx: Pick<StageContext, "conn" | "out" | "published" | "tickersPerPartition">,
  sourceDir: string,
): Promise<number> {
  const dir = join(sourceDir, "fundamentals");
  const layout = stagingLayout(ctx.out);
  mkdirSync(layout.flowDir, { recursive: true });
  // An earlier attempt finished the split (and may have added children that read it now): keep it.
  const done = readStagingRecord("financials", layout.financials);
  if (done) return done.parts;
  let parts = 0;
  const tickers = (await stageCompanies(ctx.conn, sourceDir))
    ? (await sortedKeys(ctx.conn, "companies", "upper(ticker)")).filter(Boolean)
    : [];
  if (!reusePublished(ctx, await fundamentalsInputId(dir, tickers))) {
    rmSync(splitDir(ctx.out), { recursive: true, force: true });
    parts = (
      await splitFundamentals(
        dir,
        splitDir(ctx.out),
        boundsOf(tickerRanges(tickers, ctx.tickersPerPartition)),
        knownTickers(tickers),
      )
    ).length;
  }
  // Written last, by rename: present means the split is whole.
  writeStagingRecord("financials", layout.financials, { parts }, true);
  return parts;
}

/** Financials partitions written, against those the fundamentals step planned (a check before publishing). */
export function financialsParts(out: string): { planned: number; written: number } {
  const record = readStagingRecord("financials", stagingLayout(out).financials);
  if (!record) return { planned: -1, written: 0 };
  const planned = record.parts;
  if (planned === 0) return { planned, written: 0 };
  const counts = FINANCIAL_DIRS.map((t) => {
    const d = join(out, t);
    return existsSync(d) ? readdirSync(d).filter((x) => x.endsWith(".parquet")).length : 0;
  });
  return { planned, written: Math.min(...counts) };
}
