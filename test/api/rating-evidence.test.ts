// GET /data/v1/rating_evidence and GraphQL ratingEvidence over a fixture snapshot whose evidence
// rows are evidence-fixture.ts's (the numbers are arbitrary: what is checked is that they come back
// as they were stored, filtered, shaped and typed as docs/api/rest.md says).
import { tableFromIPC } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVIDENCE_RATINGS, type RatingEvidence } from "../../pipeline/ratings/evidence.ts";
import { SCOPES } from "../../pipeline/store/catalog/types.ts";
import { evidenceRows } from "./evidence-fixture.ts";
import { KEYS } from "./fixture.ts";
import { gql } from "./graphql-helpers.ts";
import { parseCsv, startTestServer, type TestServer } from "./helpers.ts";

const NO_RATINGS = "srk_alice_no_ratings_0123456789abcd";

let s: TestServer;
const rows = evidenceRows();
beforeAll(async () => {
  s = await startTestServer();
  s.fx.snapshot.ratingEvidence = rows;
  s.catalog.addKey(
    NO_RATINGS,
    "u1",
    SCOPES.filter((x) => x !== "ratings:read"),
  );
});
afterAll(() => s?.close());

describe("GET /rating_evidence", () => {
  it("answers the one-month horizon by default, one object per rating in order, numbers as numbers", async () => {
    const r = await s.api("rating_evidence");
    expect(r.status).toBe(200);
    expect(r.json.map((x: RatingEvidence) => x.rating)).toEqual([...EVIDENCE_RATINGS]);
    expect(r.json).toEqual(rows.filter((x) => x.horizon === 1));
    expect(Object.keys(r.json[0])).toEqual([
      "rating",
      "horizon",
      "dates",
      "meanIc",
      "icStd",
      "icir",
      "tStat",
      "hitRate",
      "quintileReturns",
      "spread",
      "topTurnover",
      "ic",
    ]);
    expect(r.text).toContain('"meanIc":0.01,');
  });

  it("filters by horizon and rating, and keeps nulls where nothing was evaluated", async () => {
    const r = await s.api("rating_evidence", { horizon: 12, rating: "momentum_12_1_baseline" });
    expect(r.status).toBe(200);
    expect(r.json).toEqual([
      expect.objectContaining({ rating: "momentum_12_1_baseline", horizon: 12, dates: 0, meanIc: null, ic: [] }),
    ]);
    const one = await s.api("rating_evidence", { horizon: 3, rating: "growth_rating" });
    expect(one.json).toEqual(rows.filter((x) => x.horizon === 3 && x.rating === "growth_rating"));
  });

  it("refuses another horizon or an unknown rating with a 400 naming the parameter", async () => {
    for (const horizon of ["2", "0", "1.5", "1.0", "01", "abc", "", "12x"]) {
      const r = await s.api("rating_evidence", { horizon });
      expect(r.status, horizon).toBe(400);
      expect(r.json.error.details).toEqual([{ param: "horizon", message: "must be one of 1, 3, 6, 12" }]);
    }
    const r = await s.api("rating_evidence", { rating: "totalRating" });
    expect(r.status).toBe(400);
    expect(r.json.error.details[0].param).toBe("rating");
  });

  it("needs ratings:read (403) and a key (401)", async () => {
    expect((await s.api("rating_evidence", { api_key: NO_RATINGS })).status).toBe(403);
    expect((await s.api("rating_evidence", { api_key: KEYS.aliceRatingsOnly })).status).toBe(200);
    expect((await s.get("/data/v1/rating_evidence")).status).toBe(401);
  });

  it("answers 304 to its ETag", async () => {
    const r = await s.api("rating_evidence", { horizon: 6 });
    const etag = r.headers.get("etag")!;
    expect(etag).toBeTruthy();
    expect((await s.api("rating_evidence", { horizon: 6 }, { "If-None-Match": etag })).status).toBe(304);
    const other = await s.api("rating_evidence", { horizon: 3 });
    expect(other.headers.get("etag")).not.toBe(etag);
  });

  it("as CSV: one row per rating and evaluated date, the summary repeated, one empty row without dates", async () => {
    const r = await s.api("rating_evidence", { horizon: 12, format: "csv" });
    expect(r.status).toBe(200);
    const [header, ...body] = parseCsv(r.text);
    expect(header).toEqual([
      "rating",
      "horizon",
      "dates",
      "meanIc",
      "icStd",
      "icir",
      "tStat",
      "hitRate",
      "quintileReturns.1",
      "quintileReturns.2",
      "quintileReturns.3",
      "quintileReturns.4",
      "quintileReturns.5",
      "spread",
      "topTurnover",
      "date",
      "ic",
      "stocks",
    ]);
    // 7 ratings × 2 dates, the baseline's one empty row
    expect(body).toHaveLength(15);
    const col = (name: string) => header.indexOf(name);
    const first = body[0];
    expect(first[col("rating")]).toBe("total_rating");
    expect(first[col("date")]).toBe("2020-01-02");
    expect(Number(first[col("ic")])).toBe(-0.1);
    expect(Number(first[col("stocks")])).toBe(52);
    expect(Number(first[col("quintileReturns.5")])).toBe(0.02);
    const last = body.at(-1)!;
    expect(last[col("rating")]).toBe("momentum_12_1_baseline");
    expect([last[col("meanIc")], last[col("date")], last[col("ic")], last[col("quintileReturns.1")]]).toEqual([
      "",
      "",
      "",
      "",
    ]);
  });

  it("as Arrow: the CSV's rows with typed columns", async () => {
    const u = new URL(`${s.url}/data/v1/rating_evidence`);
    u.searchParams.set("api_key", KEYS.alice);
    u.searchParams.set("horizon", "12");
    u.searchParams.set("format", "arrow");
    const res = await fetch(u);
    expect(res.status).toBe(200);
    const t = tableFromIPC(new Uint8Array(await res.arrayBuffer()));
    expect(t.numRows).toBe(15);
    const type = (c: string) => String(t.schema.fields.find((f) => f.name === c)?.type);
    expect(type("horizon")).toBe("Int32");
    expect(type("stocks")).toBe("Int32");
    expect(type("meanIc")).toBe("Float64");
    expect(type("quintileReturns.1")).toBe("Float64");
    expect(type("date")).toMatch(/^Date/);
    expect(t.getChild("ic")!.get(1)).toBeCloseTo(0.1, 12);
    expect(t.getChild("meanIc")!.get(14)).toBeNull();
    expect(t.getChild("rating")!.get(14)).toBe("momentum_12_1_baseline");
  });
});

describe("GraphQL ratingEvidence", () => {
  const Q = `query($h: Int!, $r: String) { ratingEvidence(horizon: $h, rating: $r) {
    rating horizon dates meanIc icStd icir tStat hitRate quintileReturns spread topTurnover ic { date ic stocks } } }`;

  it("answers REST's objects", async () => {
    const r = await gql(s, Q, { h: 3 });
    expect(r.json.errors).toBeUndefined();
    expect(r.json.data.ratingEvidence).toEqual(rows.filter((x) => x.horizon === 3));
    const one = await gql(s, Q, { h: 12, r: "momentum_12_1_baseline" });
    expect(one.json.data.ratingEvidence).toEqual(rows.filter((x) => x.horizon === 12 && x.rating.startsWith("mom")));
  });

  it("defaults to one month, and refuses a bad horizon or rating naming it", async () => {
    const d = await gql(s, "{ ratingEvidence { rating horizon } }");
    expect(d.json.data.ratingEvidence.map((x: { horizon: number }) => x.horizon)).toEqual(
      EVIDENCE_RATINGS.map(() => 1),
    );
    const bad = await gql(s, Q, { h: 2 });
    expect(bad.json.errors[0].message).toContain("horizon");
    expect(bad.json.errors[0].extensions.code).toBe("BAD_USER_INPUT");
    const badRating = await gql(s, Q, { h: 1, r: "nope" });
    expect(badRating.json.errors[0].message).toContain("rating");
  });

  it("needs ratings:read", async () => {
    const r = await gql(s, Q, { h: 1 }, { key: NO_RATINGS });
    expect(r.json.errors[0].extensions.code).toBe("FORBIDDEN");
  });
});
