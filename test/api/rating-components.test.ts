// GET /stock_ratings/:ticker?include=components over a snapshot the factor model rated (a generated
// source without ratings.csv, through a real pipeline run, served by the lazy reader). The expected
// values are DuckDB's own reading of the snapshot's Parquet; a vendor-rated snapshot has none.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReaderSource } from "../../api/resources/reader-source.ts";
import { FACTORS } from "../../pipeline/ratings/factors.ts";
import { openDuck, rows } from "../../pipeline/store/duck/duck.ts";
import { SnapshotReader } from "../../pipeline/store/read/snapshot-reader.ts";
import { snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { RATING_NAMES } from "../../pipeline/types.ts";
import { generatedStore } from "../store/published.ts";
import { gql } from "./graphql-helpers.ts";
import { parseCsv, startTestServer, type TestServer } from "./helpers.ts";

let srv: TestServer;
let vendor: TestServer;
let reader: SnapshotReader;
let dir: string;
let db: Awaited<ReturnType<typeof openDuck>>;

beforeAll(async () => {
  const { dataDir, run } = await generatedStore({ companies: 30, years: 3, seed: 9, vendorRatings: false });
  const id = await run();
  dir = snapshotDir(dataDir, id);
  reader = await SnapshotReader.open(dataDir, id, { cacheEntries: 8 });
  srv = await startTestServer({ deps: { snapshot: () => new ReaderSource(reader) } });
  vendor = await startTestServer();
  db = await openDuck();
}, 120_000);
afterAll(async () => {
  await srv?.close();
  await vendor?.close();
  reader?.close();
  db?.close();
});

const parquet = (sql: string, params: Record<string, string>) =>
  rows(db.conn, sql.replaceAll("T", `read_parquet('${dir}/rating_components/*.parquet')`), params);

describe("stock_ratings/:ticker?include=components", () => {
  it("adds every factor's raw value, score and statement to the rating, as stored", async () => {
    const ticker = reader.companies[4].ticker;
    const plain = await srv.api(`stock_ratings/${ticker}`);
    const r = await srv.api(`stock_ratings/${ticker}`, { include: "components" });
    expect(r.status).toBe(200);
    const { components, ...rating } = r.json;
    expect(rating).toEqual(plain.json);
    expect(Object.keys(plain.json)).not.toContain("components");
    expect(components.map((c: { factor: string }) => c.factor)).toEqual(FACTORS.map((f) => f.name));
    const [row] = await parquet(
      "select *, strftime(publish_date, '%Y-%m-%d') as pd from T where ticker = $t and date = $d::date",
      {
        t: ticker,
        d: rating.date,
      },
    );
    // values: the raw values then the scores, little-endian float64 in factor order (docs/ratings.md)
    const bytes = row.values as Uint8Array;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const stored = (i: number) => {
      const v = view.getFloat64(8 * i, true);
      return Number.isNaN(v) ? null : v;
    };
    expect(bytes.byteLength).toBe(2 * 8 * FACTORS.length);
    for (const [j, c] of components.entries()) {
      const f = FACTORS[j];
      expect(c.rating).toBe(f.rating);
      expect(c.raw).toBe(stored(j));
      expect(c.score).toBe(stored(FACTORS.length + j));
      if (c.score !== null) expect(c.score >= 0 && c.score <= 10).toBe(true);
      const fromStatement = f.statement && c.raw !== null;
      expect(c.fiscalYear).toBe(fromStatement ? row.fiscal_year : null);
      expect(c.publishDate).toBe(fromStatement ? row.pd : null);
      if (c.publishDate) expect(c.publishDate <= rating.date).toBe(true);
    }
    expect(RATING_NAMES).toContain(components[0].rating);
  });

  it("answers for an earlier rating date, and as one CSV row per component", async () => {
    const ticker = reader.companies[7].ticker;
    const date = reader.ratingDates[Math.floor(reader.ratingDates.length / 2)];
    const r = await srv.api(`stock_ratings/${ticker}`, { include: "components", date });
    expect(r.status).toBe(200);
    const csv = await srv.api(`stock_ratings/${ticker}`, { include: "components", date, format: "csv" });
    expect(csv.status).toBe(200);
    const [header, ...body] = parseCsv(csv.text);
    expect(header).toEqual(["date", "ticker", "rating", "factor", "raw", "score", "fiscalYear", "publishDate"]);
    expect(body).toHaveLength(FACTORS.length);
    expect(body.map((b) => b[3])).toEqual(FACTORS.map((f) => f.name));
    expect(body.every((b) => b[0] === r.json.date && b[1] === ticker)).toBe(true);
  });

  it("is an empty list for vendor ratings, and a 400 naming include for anything else", async () => {
    const ticker = vendor.fx.snapshot.companies[0].ticker;
    const r = await vendor.api(`stock_ratings/${ticker}`, { include: "components" });
    expect(r.status).toBe(200);
    expect(r.json.components).toEqual([]);
    const bad = await srv.api(`stock_ratings/${reader.companies[0].ticker}`, { include: "factors" });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/include/);
  });
});

describe("GraphQL StockRatingNode.components", () => {
  const query = `query($t: String!, $d: String) { stock(ticker: $t) { rating(date: $d) { date components {
    rating factor raw score fiscalYear publishDate } } } }`;

  it("is the REST extension's list", async () => {
    const ticker = reader.companies[2].ticker;
    const date = reader.ratingDates.at(-3)!;
    const g = await gql(srv, query, { t: ticker, d: date });
    expect(g.status).toBe(200);
    expect(g.json.errors).toBeUndefined();
    const rest = await srv.api(`stock_ratings/${ticker}`, { include: "components", date });
    expect(g.json.data.stock.rating.components).toEqual(rest.json.components);
    expect(g.json.data.stock.rating.components).toHaveLength(FACTORS.length);
  });

  it("is empty for vendor ratings", async () => {
    const g = await gql(vendor, query, { t: vendor.fx.snapshot.companies[0].ticker });
    expect(g.json.errors).toBeUndefined();
    expect(g.json.data.stock.rating.components).toEqual([]);
  });
});
