// The universe a flow worker builds in its ingest job (the run's price panel and ratings, GBs at
// 5,000 × 25) serves the run's backtests on that worker and is let go once none is left: kept, it
// made every later job of the worker slower (its stock metric jobs 1.7–1.8 CPU s against
// 1.1–1.3 on the other worker, 5,000 × 25) and held the memory until the next run.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { generateSample } from "../../data/generate.ts";
import { UniverseCache } from "../../pipeline/run/universe-cache.ts";
import { backtestDone, type FlowPlan, flowBacktestStep, flowIngestStep } from "../../pipeline/stages/flow-steps.ts";
import { LevelsCache } from "../../pipeline/stages/metrics-partition.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { openDuck } from "../../pipeline/store/duck/duck.ts";

const silent = { info: () => undefined, warn: () => undefined };
let source = "";
let catalog: Catalog;

beforeAll(async () => {
  source = (await generateSample(mkdtempSync(join(tmpdir(), "universe-src-")), { seed: 5, companies: 20, years: 2 }))
    .outDir;
  catalog = await Catalog.open(join(mkdtempSync(join(tmpdir(), "universe-cat-")), "catalog.duckdb"));
}, 60_000);

/** The flow's ingest step on its own staging folder, as a worker runs it. */
async function ingest(universes: UniverseCache): Promise<{ out: string; plan: FlowPlan }> {
  const out = mkdtempSync(join(tmpdir(), "universe-out-"));
  const db = await openDuck(":memory:", { threads: "1" });
  try {
    const plan = await flowIngestStep({ conn: db.conn, connect: db.connect, out, catalog, log: silent }, source, [], {
      universes,
    });
    return { out, plan };
  } finally {
    db.close();
  }
}

describe("the universe a flow worker holds", () => {
  it("serves the run's backtests and is let go after the last one", async () => {
    const universes = new UniverseCache(); // the worker process's
    const levels = new LevelsCache();
    const { out, plan } = await ingest(universes);
    // The generated sample's benchmarks are rules: ingest built the universe and kept it.
    expect(plan.portfolioIds.length).toBeGreaterThan(1);
    expect(universes.holds(out)).toBe(true);
    const [last, ...others] = [...plan.portfolioIds].reverse();
    for (const id of others) {
      await flowBacktestStep(out, id, { universes, levels });
      expect(backtestDone(out, id)).toBe(true);
      // a backtest of the run is still to come: a stock metric job in between keeps it
      universes.release(out);
      expect(universes.holds(out)).toBe(true);
    }
    await flowBacktestStep(out, last, { universes, levels });
    expect(universes.holds(out)).toBe(false);
  }, 120_000);

  it("is let go when the worker takes another run's job", async () => {
    const universes = new UniverseCache();
    const { out } = await ingest(universes);
    expect(universes.holds(out)).toBe(true);
    universes.release(out);
    expect(universes.holds(out)).toBe(true);
    universes.release(join(tmpdir(), "another-run"));
    expect(universes.holds(out)).toBe(false);
  }, 120_000);
});
