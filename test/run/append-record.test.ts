// The append's steps share only the staging folder (pipeline/stages/append.ts): the analytics and
// backtest steps read what ingest left through the `append` record's schema, so a record missing or
// of another shape is an error naming the file and the field, not a wrong value inside a step.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readAppendRecord } from "../../pipeline/stages/append.ts";
import { appendMetrics } from "../../pipeline/stages/append-analytics.ts";
import { appendPortfolios } from "../../pipeline/stages/append-portfolios.ts";
import type { StageContext } from "../../pipeline/stages/context.ts";
import { StagingRecordError, stagingLayout } from "../../pipeline/store/snapshot/staging-layout.ts";

const stagingFolder = () => {
  const out = join(mkdtempSync(join(tmpdir(), "append-record-")), ".staging-x");
  mkdirSync(stagingLayout(out).flowDir, { recursive: true });
  return out;
};
const state = (out: string) => ({ ctx: { out } as StageContext, timings: {}, partitions: 0 });

describe("the append's record in the staging folder", () => {
  it("a later step before ingest wrote it says so", async () => {
    const out = stagingFolder();
    await expect(appendPortfolios(state(out))).rejects.toThrow(/append's ingest step has not run/);
  });

  it("a record of another shape is a StagingRecordError naming the file and the field", async () => {
    const out = stagingFolder();
    const path = stagingLayout(out).append;
    writeFileSync(path, JSON.stringify({ base: "/x", lastPriceDate: 20251231 }));
    expect(() => readAppendRecord(out)).toThrow(StagingRecordError);
    expect(() => readAppendRecord(out)).toThrow(/append\.json.*lastPriceDate/);
    // the metrics step reads it too, before it starts a partition
    await expect(appendMetrics(state(out) as unknown as Parameters<typeof appendMetrics>[0])).rejects.toThrow(
      StagingRecordError,
    );
    writeFileSync(path, "{");
    await expect(appendPortfolios(state(out))).rejects.toThrow(/not JSON/);
  });
});
