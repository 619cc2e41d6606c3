// What a consumer's typo meets (issue #40.4): a parameter the route does not declare is a 400 naming
// it (the list of known ones is the route's own zod schema, so a parameter declared there is known
// at once), a present but malformed value has its own message apart from a missing one, and a
// method a path does not serve is a 405 with Allow.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REST_ROUTES } from "../../api/rest/index.ts";
import { KEYS } from "./fixture.ts";
import { startTestServer, type TestServer } from "./helpers.ts";

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(() => srv?.close());

/** A concrete path of each route: the fixture's first ticker, portfolio 101, alice's watchlist 1. */
function concrete(path: string): string {
  const t = srv.fx.snapshot.companies[0].ticker;
  return path.replace(":ticker", t).replace(":id", path.startsWith("/watchlist") ? "1" : "101");
}
const params = (r: { json: unknown }) =>
  (r.json as { error: { details: { param: string; message: string }[] } }).error.details;

describe("unknown query parameters", () => {
  it("stock_metrics/AAPL with a misspelt parameter is a 400 naming it, not the whole period", async () => {
    const r = await srv.api("stock_metrics/AAPL", { strat: "2015-01-01" });
    expect(r.status).toBe(400);
    expect(params(r).map((d) => d.param)).toEqual(["strat"]);
    expect(params(r)[0].message).toMatch(/^unknown parameter \(this endpoint takes .*benchmark/);
  });

  it.each(REST_ROUTES.map((r) => [r.id, r.path] as const))(
    "%s: refuses one, knows its own and api_key, format",
    async (_, path) => {
      const at = concrete(path).slice(1);
      const bad = await srv.api(at, { no_such_param: "1", value: "100000" });
      expect(bad.status).toBe(400);
      expect(params(bad).map((d) => d.param)).toContain("no_such_param");
      // every parameter the route's schema declares is known: a junk value may be refused, never as unknown
      const route = REST_ROUTES.find((x) => x.path === path)!;
      const declared = Object.keys(route.query.shape);
      const junk = await srv.api(at, Object.fromEntries([...declared, "format"].map((k) => [k, "\u00a7junk"])));
      for (const d of junk.status === 400 ? params(junk) : []) expect(d.message, d.param).not.toMatch(/^unknown/);
    },
  );

  it("names every unknown parameter at once, beside the other bad values", async () => {
    const r = await srv.api("stock_ratings", { limit: "0", colour: "red", sise: "3" });
    expect(r.status).toBe(400);
    expect(params(r).map((d) => d.param)).toEqual(["colour", "sise", "limit"]);
  });

  it("is checked after the key: no key is still a 401", async () => {
    const r = await fetch(`${srv.url}/data/v1/stock_ratings?colour=red`);
    expect(r.status).toBe(401);
  });
});

describe("malformed is not missing", () => {
  it("portfolio_trades: value=abc says malformed, no value says required", async () => {
    const bad = await srv.api("portfolio_trades/101", { value: "abc" });
    expect([bad.status, params(bad)]).toEqual([400, [{ param: "value", message: "must be a positive integer (USD)" }]]);
    const none = await srv.api("portfolio_trades/101");
    expect(params(none)[0].message).toMatch(/^required/);
  });
});

describe("methods", () => {
  it.each([
    ["POST", "stock_ratings"],
    ["DELETE", "portfolios/101"],
    ["PUT", "export/ratings"],
    ["PATCH", "openapi.json"],
  ])("%s /data/v1/%s is a 405 with Allow: GET, HEAD", async (method, path) => {
    const r = await fetch(`${srv.url}/data/v1/${path}?api_key=${KEYS.alice}`, { method });
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("GET, HEAD");
    expect((await r.json()).error.code).toBe("method_not_allowed");
  });

  it("a path that does not exist stays a 404 whatever the method", async () => {
    for (const method of ["GET", "POST"])
      expect((await fetch(`${srv.url}/data/v1/no_such_thing?api_key=${KEYS.alice}`, { method })).status).toBe(404);
  });
});
