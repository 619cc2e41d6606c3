// Trading costs end to end (issue #41): a generated source whose portfolios.json repeats portfolio
// 101 as 901 with costBps 30, published by a real pipeline run and served over HTTP. The reference
// for 901 is 101 itself (the same selections without costs): net = gross × Π(1 − 0.003 × turnover).
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSample } from "../../data/generate.ts";
import { rebalanceOne } from "../../jobs/local/rebalance-run.ts";
import { runPipeline } from "../../jobs/local/runner.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { loadSnapshot } from "../../pipeline/store/read/load-snapshot.ts";
import type { Snapshot } from "../../pipeline/store/snapshot/model.ts";
import { startTestServer, type TestServer } from "./helpers.ts";

let snap: Snapshot;
let srv: TestServer;
let dataDir: string;
const RATE = 30 / 10_000;

beforeAll(async () => {
  const src = mkdtempSync(join(tmpdir(), "costs-src-"));
  await generateSample(src, { companies: 20, years: 2, seed: 7 });
  const file = join(src, "portfolios.json");
  const json = JSON.parse(readFileSync(file, "utf8"));
  const base = json.portfolios.find((p: { id: string }) => p.id === "101");
  json.portfolios.push({ ...base, id: "901", name: "101 with costs", costBps: 30 });
  writeFileSync(file, JSON.stringify(json));
  dataDir = mkdtempSync(join(tmpdir(), "costs-store-"));
  const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
  const log = { info: () => undefined, warn: () => undefined };
  const { meta } = await runPipeline({ dataDir, sourceDir: src, catalog, log, workers: 0 });
  snap = await loadSnapshot(dataDir, meta.id);
  srv = await startTestServer({ deps: { snapshot: () => snap } });
}, 180_000);
afterAll(async () => {
  await srv?.close();
});

const endValue = (r: Float64Array) => r.reduce((v, x) => v * (1 + x), 1);

describe("a published portfolio with costBps 30", () => {
  it("trades like its copy without costs and pays 0.3% of each rebalance's traded value", () => {
    const gross = snap.portfolios.get("101")!;
    const net = snap.portfolios.get("901")!;
    expect(net.rules.costBps).toBe(30);
    expect(gross.rules).not.toHaveProperty("costBps");
    const g = gross.rebalances!;
    const n = net.rebalances!;
    expect(n.length).toBeGreaterThan(3);
    expect(n.map((r) => [r.date, r.added, r.removed])).toEqual(g.map((r) => [r.date, r.added, r.removed]));
    n.forEach((r, i) => {
      expect(r.turnover).toBeCloseTo(g[i].turnover!, 12);
      expect(r.cost).toBeCloseTo(RATE * r.turnover!, 15);
      expect(g[i].cost).toBe(0);
    });
    const factor = g.reduce((p, r) => p * (1 - RATE * r.turnover!), 1);
    expect(endValue(net.returns.returns) / (endValue(gross.returns.returns) * factor)).toBeCloseTo(1, 12);
    expect(net.returns.returns[0]).toBeCloseTo(-RATE, 15); // the first purchase, from cash: turnover 1
  });

  it("REST and GraphQL rebalances carry turnover and cost", async () => {
    const rest = (await srv.api("portfolio_rebalances/901", { limit: 200 })).json as { cost: number }[];
    expect(rest.map((r) => r.cost)).toEqual([...snap.portfolios.get("901")!.rebalances!].reverse().map((r) => r.cost));
    expect(rest.every((r) => r.cost > 0)).toBe(true);
  });

  it("portfolio_metrics adds the average annual turnover: Σ turnover after the first purchase / years", async () => {
    const net = snap.portfolios.get("901")!;
    const dates = net.returns.dates;
    // years as CAGR counts them: calendar days / 365
    const years = (Date.parse(dates.at(-1)!) - Date.parse(dates[0])) / 86_400_000 / 365;
    const sum = net.rebalances!.slice(1).reduce((s, r) => s + r.turnover!, 0);
    const want = `${Math.round((sum / years) * 10_000) / 100}%`;
    const rows = (await srv.api("portfolio_metrics/901")).json as Record<string, string>[];
    expect(rows.at(-1)).toEqual({ metric: "Avg. Annual Turnover ", Portfolio: want });
    const plain = (await srv.api("portfolio_metrics/101")).json as Record<string, string>[];
    expect(rows.length).toBe(plain.length + 1);
    expect(plain.some((r) => r.metric.startsWith("Avg. Annual Turnover"))).toBe(false);
    const withBench = (await srv.api("portfolio_metrics/901", { benchmark: "1" })).json as Record<string, string>[];
    expect(Object.values(withBench.at(-1)!)).toEqual(["Avg. Annual Turnover ", want, "-"]);
  });
});

describe("a user portfolio with costs, rebalanced alone on the published snapshot", () => {
  it("gets the turnover and costs of the same rules in the full run; the others keep theirs", async () => {
    const rules = { ...snap.portfolios.get("901")!.rules, id: "5001", name: "mine" };
    const meta = await rebalanceOne({
      dataDir,
      log: { info: () => undefined, warn: () => undefined },
      portfolio: { rules, ownerId: "1", createdAt: "2024-02-01T00:00:00.000Z" },
    });
    const after = await loadSnapshot(dataDir, meta.id);
    const mine = after.portfolios.get("5001")!;
    const full = snap.portfolios.get("901")!;
    expect(mine.rebalances!.map((r) => [r.date, r.turnover, r.cost])).toEqual(
      full.rebalances!.map((r) => [r.date, r.turnover, r.cost]),
    );
    expect([...mine.returns.returns]).toEqual([...full.returns.returns]);
    for (const id of ["101", "901"])
      expect(after.portfolios.get(id)!.rebalances).toEqual(snap.portfolios.get(id)!.rebalances);
  });
});
