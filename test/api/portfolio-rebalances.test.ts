// GET /data/v1/portfolio_rebalances/:id and the GraphQL field Portfolio.rebalances (an extension
// beyond the interface) over a snapshot a real pipeline run published (a generated 20-company
// source), served over HTTP by the lazy reader and by the in-memory loader. The expected rows are
// DuckDB's own reading of the snapshot's holdings.parquet (list functions over the rebalance
// rows, independent of the TypeScript diff); a hand-checked three-rebalance input checks that diff.
import { join } from "node:path";
import { tableFromIPC } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReaderSource } from "../../api/resources/reader-source.ts";
import { rows } from "../../pipeline/store/duck/duck.ts";
import { loadSnapshot } from "../../pipeline/store/read/load-snapshot.ts";
import { rebalanceHistory } from "../../pipeline/store/read/rebalance-history.ts";
import { SnapshotReader } from "../../pipeline/store/read/snapshot-reader.ts";
import { publishedSnapshot } from "../store/published.ts";
import { KEYS } from "./fixture.ts";
import { parseCsv, startTestServer, type TestServer } from "./helpers.ts";

interface Rebalance {
  date: string;
  holdingsCount: number;
  added: string[];
  removed: string[];
  turnover: number | null;
  cost: number | null;
}

let lazy: TestServer;
let memory: TestServer;
let reader: SnapshotReader;
let expected: Map<string, Rebalance[]>;
let ids: string[];
let db: Awaited<ReturnType<typeof publishedSnapshot>>["db"];

/** Every predefined portfolio's rebalances, newest first, as DuckDB reads them from the Parquet file. */
async function fromParquet(dir: string): Promise<Map<string, Rebalance[]>> {
  const got = (await rows(
    db.conn,
    `with s as (select portfolio_id, strftime(date, '%Y-%m-%d') as d, list(ticker order by ticker) as t
        from read_parquet($1) where kind = 'rebalance' group by portfolio_id, date),
     w as (select *, coalesce(lag(t) over (partition by portfolio_id order by d), []::varchar[]) as prev from s)
     select portfolio_id, d, len(t)::integer as n,
       list_sort(list_filter(t, x -> not list_contains(prev, x))) as added,
       list_sort(list_filter(prev, x -> not list_contains(t, x))) as removed, c.turnover, c.cost
     from w left join read_parquet($2) c on c.id = w.portfolio_id and strftime(c.date, '%Y-%m-%d') = w.d
     order by portfolio_id, d desc`,
    [join(dir, "holdings.parquet"), join(dir, "portfolio_turnover.parquet")],
  )) as (Omit<Rebalance, "date" | "holdingsCount"> & { portfolio_id: string; d: string; n: number })[];
  const out = new Map<string, Rebalance[]>();
  for (const r of got)
    out.set(r.portfolio_id, [
      ...(out.get(r.portfolio_id) ?? []),
      {
        date: r.d,
        holdingsCount: r.n,
        added: [...r.added],
        removed: [...r.removed],
        turnover: r.turnover,
        cost: r.cost,
      },
    ]);
  return out;
}

/** The predefined portfolio with the most rebalances. */
const busiest = () => ids.reduce((a, b) => ((expected.get(b)?.length ?? 0) > (expected.get(a)?.length ?? 0) ? b : a));

beforeAll(async () => {
  const snap = await publishedSnapshot({ companies: 20, years: 2, seed: 7 });
  db = snap.db;
  reader = await SnapshotReader.open(snap.dataDir, snap.id, { cacheEntries: 8 });
  lazy = await startTestServer({ deps: { snapshot: () => new ReaderSource(reader) } });
  const loaded = await loadSnapshot(snap.dataDir, snap.id);
  memory = await startTestServer({ deps: { snapshot: () => loaded } });
  expected = await fromParquet(snap.dir);
  ids = reader.predefinedIds;
}, 180_000);
afterAll(async () => {
  await lazy?.close();
  await memory?.close();
  reader?.close();
  db?.close();
});

describe("rebalanceHistory (hand-checked)", () => {
  it("counts each selection and names the tickers that entered and left, ascending by date", () => {
    const sel = (...t: string[]) => t.map((ticker) => ({ ticker }));
    const byDate = new Map([
      ["2020-02-03", sel("B", "C", "D")],
      ["2020-01-02", sel("A", "B", "C")],
      ["2020-03-02", sel("B", "C", "D")],
    ]);
    const none = { turnover: null, cost: null };
    expect(rebalanceHistory(byDate)).toEqual([
      { date: "2020-01-02", holdingsCount: 3, added: ["A", "B", "C"], removed: [], ...none },
      { date: "2020-02-03", holdingsCount: 3, added: ["D"], removed: ["A"], ...none },
      { date: "2020-03-02", holdingsCount: 3, added: [], removed: [], ...none },
    ]);
    expect(rebalanceHistory(undefined)).toEqual([]);
    const turnover = new Map<string, [number, number]>([
      ["2020-01-02", [1, 0.001]],
      ["2020-02-03", [0.7, 0.0007]],
    ]);
    expect(rebalanceHistory(byDate, turnover).map((r) => [r.turnover, r.cost])).toEqual([
      [1, 0.001],
      [0.7, 0.0007],
      [null, null],
    ]);
  });
});

describe("GET /data/v1/portfolio_rebalances/:id", () => {
  it("the snapshot keeps every rebalance, not only the latest", () => {
    expect(ids.length).toBeGreaterThan(0);
    expect(expected.get(busiest())!.length).toBeGreaterThan(3);
  });

  it("each rebalance has its turnover: 1 at the first (bought from cash), 0..2 after; no cost without costBps", () => {
    for (const id of ids) {
      const all = expected.get(id)!;
      const first = all.at(-1)!;
      expect(first.turnover).toBeCloseTo(first.holdingsCount > 0 ? 1 : 0, 12);
      for (const r of all) {
        expect(r.turnover).toBeGreaterThanOrEqual(0);
        expect(r.turnover).toBeLessThanOrEqual(2 + 1e-12);
        expect(r.cost).toBe(0);
      }
    }
    // a rebalance that changed the selection traded something
    expect(expected.get(busiest())!.some((r) => r.added.length > 0 && r.turnover! > 0.01)).toBe(true);
  });

  it("answers each predefined portfolio's rebalances as holdings.parquet holds them (lazy, in-memory)", async () => {
    for (const srv of [lazy, memory])
      for (const id of ids) {
        const r = await srv.api(`portfolio_rebalances/${id}`, { limit: 200 });
        expect(r.status, r.text.slice(0, 200)).toBe(200);
        expect(r.json).toEqual(expected.get(id)!.slice(0, 200));
      }
  });

  it("pages with limit and offset, and its newest row's holdings are /portfolio_holdings", async () => {
    const id = busiest();
    const all = expected.get(id)!;
    const r = await lazy.api(`portfolio_rebalances/${id}`, { limit: 2, offset: 1 });
    expect(r.json).toEqual(all.slice(1, 3));
    expect((await lazy.api(`portfolio_rebalances/${id}`)).json).toEqual(all.slice(0, 50)); // default limit 50
    const held = (await lazy.api(`portfolio_holdings/${id}`, { limit: 200 })).json as { date: string }[];
    expect(held.length).toBe(all[0].holdingsCount);
    expect(held.every((h) => h.date === all[0].date)).toBe(true);
  });

  it("CSV and Arrow carry the same rows", async () => {
    const id = busiest();
    const all = expected.get(id)!;
    const csv = parseCsv((await lazy.api(`portfolio_rebalances/${id}`, { format: "csv", limit: 200 })).text);
    expect(csv[0]).toEqual(["date", "holdingsCount", "added", "removed", "turnover", "cost"]);
    expect(csv.slice(1).map((c) => [c[0], Number(c[1]), JSON.parse(c[2]), JSON.parse(c[3]), Number(c[4])])).toEqual(
      all.map((r) => [r.date, r.holdingsCount, r.added, r.removed, r.turnover]),
    );
    const u = new URL(`${lazy.url}/data/v1/portfolio_rebalances/${id}?format=arrow&limit=200`);
    const t = tableFromIPC(new Uint8Array(await (await fetch(u, { headers: { api_key: KEYS.alice } })).arrayBuffer()));
    expect(t.numRows).toBe(all.length);
    expect(Number(t.getChild("holdingsCount")!.get(0))).toBe(all[0].holdingsCount);
  });

  it("bad parameters are a 400 naming them; unknown portfolios a 404; the portfolios scope is needed", async () => {
    const id = busiest();
    for (const [p, v] of [
      ["limit", "0"],
      ["limit", "201"],
      ["offset", "-1"],
      ["offset", "x"],
    ]) {
      const r = await lazy.api(`portfolio_rebalances/${id}`, { [p]: v });
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.json)).toContain(`"param":"${p}"`);
    }
    expect((await lazy.api("portfolio_rebalances/999999")).status).toBe(404);
    expect((await lazy.api(`portfolio_rebalances/${id}`, { api_key: KEYS.aliceRatingsOnly })).status).toBe(403);
    expect((await lazy.api(`portfolio_rebalances/${id}`, { api_key: KEYS.aliceNoAnalytics })).status).toBe(200);
    expect((await lazy.get(`/data/v1/portfolio_rebalances/${id}`)).status).toBe(401);
  });

  it("a user portfolio is its owner's only, as /portfolio_holdings treats it", async () => {
    const srv = await startTestServer();
    try {
      for (const path of ["portfolio_rebalances/201", "portfolio_holdings/201"]) {
        expect((await srv.api(path)).status, path).toBe(200);
        expect((await srv.api(path, { api_key: KEYS.bob })).status, path).toBe(404);
      }
    } finally {
      await srv.close();
    }
  });

  it("is described in the OpenAPI document", async () => {
    const doc = (await lazy.get("/data/v1/openapi.json")).json as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toContain("/data/v1/portfolio_rebalances/{id}");
  });
});

describe("GraphQL Portfolio.rebalances", () => {
  it("pages the same rows as REST", async () => {
    const id = busiest();
    const all = expected.get(id)!;
    const q = `query($id: ID!) { portfolio(id: $id) { rebalances(first: 3) { totalCount
      edges { node { date holdingsCount added removed turnover cost } } pageInfo { hasNextPage } } } }`;
    const r = await fetch(`${lazy.url}/graphiql`, {
      method: "POST",
      headers: { api_key: KEYS.alice, "content-type": "application/json" },
      body: JSON.stringify({ query: q, variables: { id } }),
    });
    const body = (await r.json()) as {
      data: { portfolio: { rebalances: { totalCount: number; edges: { node: Rebalance }[] } } };
    };
    const c = body.data.portfolio.rebalances;
    expect(c.totalCount).toBe(all.length);
    expect(c.edges.map((e) => e.node)).toEqual(all.slice(0, 3));
  });
});
