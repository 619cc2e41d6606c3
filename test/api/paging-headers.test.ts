// Paging headers on every paged list and every format (issue #40.3): X-Total-Count is the list's whole
// length (counted here by walking every page), and Link (RFC 8288) names the next and previous pages;
// following rel="next" from the first page walks the whole list with no duplicate and no gap.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAST_HEADER } from "../../api/fast/fast-path.ts";
import { KEYS } from "./fixture.ts";
import { startTestServer, type TestServer } from "./helpers.ts";

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(() => srv?.close());

const get = (target: string, headers: Record<string, string> = { api_key: KEYS.alice }) =>
  fetch(`${srv.url}${target}`, { headers });

/** The Link header's targets by relation. */
function links(h: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of (h ?? "").matchAll(/<([^>]*)>;\s*rel="([^"]+)"/g)) out[m[2]] = m[1];
  return out;
}

/** Every item of a list, by pages of 200 (the largest limit), counted without the headers. */
async function walk(path: string): Promise<unknown[]> {
  const all: unknown[] = [];
  for (let offset = 0; ; offset += 200) {
    const page = (await (await get(`${path}${path.includes("?") ? "&" : "?"}limit=200&offset=${offset}`)).json()) as [];
    all.push(...page);
    if (page.length < 200) return all;
  }
}

describe("X-Total-Count and Link", () => {
  it.each([
    "/data/v1/stock_ratings",
    "/data/v1/stock_ratings?search=app",
    "/data/v1/portfolio_holdings/101",
    "/data/v1/watchlist_items/1",
  ])("%s: the total, and rel=next walks the list without duplicate or gap", async (path) => {
    const all = await walk(path);
    expect(all.length).toBeGreaterThan(0);
    const seen: unknown[] = [];
    let target: string | undefined = `${path}${path.includes("?") ? "&" : "?"}limit=7`;
    let pages = 0;
    while (target !== undefined) {
      const r = await get(target);
      expect(r.status, target).toBe(200);
      expect(r.headers.get("x-total-count"), target).toBe(String(all.length));
      const l = links(r.headers.get("link"));
      expect("prev" in l, target).toBe(pages > 0);
      seen.push(...((await r.json()) as unknown[]));
      target = l.next;
      pages++;
    }
    expect(pages).toBe(Math.ceil(all.length / 7));
    expect(seen).toEqual(all);
  });

  it("the same headers on json, csv and arrow (the links keep the format); a cached answer keeps them", async () => {
    const base = "/data/v1/stock_ratings?limit=20&offset=40&order_by=ticker";
    for (const format of ["json", "csv", "arrow"]) {
      // repeats: from the body cache, and for json and csv (once filled) the fast path's response cache
      const answers = [await get(`${base}&format=${format}`)];
      for (let i = 0; i < 50 && answers[answers.length - 1].headers.get(FAST_HEADER) !== "hit"; i++) {
        answers.push(await get(`${base}&format=${format}`));
        if (format === "arrow" && i >= 2) break; // never filled: binary bodies stay out of it
        await new Promise((done) => setTimeout(done, 5));
      }
      for (const r of answers) {
        expect([r.status, r.headers.get("x-total-count")]).toEqual([200, "259"]); // the fixture's 260 less one unrated
        // offsets by hand: the page at 40 of 20 has its next at 60 and its previous at 20
        expect(links(r.headers.get("link"))).toEqual({
          next: `/data/v1/stock_ratings?format=${format}&limit=20&order_by=ticker&offset=60`,
          prev: `/data/v1/stock_ratings?format=${format}&limit=20&order_by=ticker&offset=20`,
        });
      }
      if (format !== "arrow") expect(answers[answers.length - 1].headers.get(FAST_HEADER), format).toBe("hit");
    }
  });

  it("never echoes the api_key query parameter; the last page has no next, the first no prev", async () => {
    const total = (await walk("/data/v1/portfolio_holdings/101")).length;
    const last = await get(`/data/v1/portfolio_holdings/101?api_key=${KEYS.alice}&limit=5&offset=${total - 2}`, {});
    expect(last.status).toBe(200);
    const link = last.headers.get("link") ?? "";
    expect(link).not.toContain("api_key");
    expect(Object.keys(links(link))).toEqual(["prev"]);
    expect(links(link).prev).toBe(`/data/v1/portfolio_holdings/101?limit=5&offset=${total - 7}`);
    const first = await get("/data/v1/portfolio_holdings/101?limit=5");
    expect(Object.keys(links(first.headers.get("link")))).toEqual(["next"]);
  });

  it("an empty list: total 0, no Link; an item route has no paging headers", async () => {
    const none = await get("/data/v1/portfolio_rebalances/101"); // the fixture keeps no rebalance history
    expect([none.status, none.headers.get("x-total-count"), none.headers.get("link")]).toEqual([200, "0", null]);
    const one = await get(`/data/v1/stock_ratings/${srv.fx.snapshot.companies[0].ticker}`);
    expect([one.status, one.headers.get("x-total-count")]).toEqual([200, null]);
  });
});
