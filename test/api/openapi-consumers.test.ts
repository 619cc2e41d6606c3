// The OpenAPI document as tools nobody here wrote read it (issue #40.2): tuples a draft-07 validator
// reads as 2020-12 does (no prefixItems, no items: false), the 431 on every operation, an example on
// every path parameter that the server accepts (Dredd builds its requests from them), info.license,
// and the paging headers on the paged lists. Redocly's recommended rules: http-conventions.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYS } from "./fixture.ts";
import { startTestServer, type TestServer } from "./helpers.ts";

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document, walked generically
type J = any;

let s: TestServer;
let doc: J;
beforeAll(async () => {
  s = await startTestServer();
  doc = (await s.get("/data/v1/openapi.json")).json;
});
afterAll(() => s?.close());

const operations = () =>
  Object.entries(doc.paths as Record<string, J>).flatMap(([path, item]) =>
    Object.entries(item as Record<string, J>).map(([method, op]) => ({ path, method, op })),
  );

describe("the OpenAPI document under other tools", () => {
  it("writes no tuple as prefixItems: Portfolio.ranges bounds are items with a fixed length of 2", () => {
    const text = JSON.stringify(doc);
    expect(text).not.toContain("prefixItems");
    expect(text).not.toContain('"items":false');
    const ranges = doc.components.schemas.Portfolio.properties.ranges;
    const bounds = JSON.stringify(ranges);
    expect(bounds).toContain('"minItems":2');
    expect(bounds).toContain('"maxItems":2');
  });

  it("documents 431 on every operation, and names a license", () => {
    for (const { path, method, op } of operations()) expect(op.responses["431"], `${method} ${path}`).toBeDefined();
    expect(doc.info.license.name).toBeTruthy();
  });

  it("gives every path parameter an example the server accepts (no 400 when a tool sends it)", async () => {
    for (const { path, op } of operations()) {
      let target = path;
      for (const p of op.parameters.filter((x: J) => x.in === "path")) {
        expect(p.example, `${path} ${p.name}`).toBeDefined();
        target = target.replace(`{${p.name}}`, encodeURIComponent(p.example));
      }
      // the one required query parameter of these routes (portfolio_trades' value) with its own example
      const query = path.includes("portfolio_trades") ? "&value=100000" : "";
      const r = await fetch(`${s.url}${target}?api_key=${KEYS.alice}${query}`);
      expect([200, 404, 503], `${target}: ${r.status}`).toContain(r.status);
    }
  });

  it("declares X-Total-Count and Link on the paged lists' 200", () => {
    for (const id of ["stock_ratings_list", "portfolio_holdings", "watchlist_items", "portfolio_rebalances"]) {
      const op = operations().find((o) => o.op.operationId === id)!.op;
      expect(Object.keys(op.responses["200"].headers), id).toEqual(["ETag", "X-Total-Count", "Link"]);
    }
  });
});
