// The committed SDL (schema.graphql) is the schema the code builds; the interface's names and
// argument types are in it; per-node fields of a page are read in one batch.
import { readFileSync } from "node:fs";
import { execute, parse } from "graphql";
import { describe, expect, it } from "vitest";
import { createContext } from "../../api/graphql/context.ts";
import { graphqlSchema, printedSchema } from "../../api/graphql/schema.ts";
import { createBatchReaders } from "../../api/resources/batch.ts";
import * as access from "../../api/resources/snapshot-access.ts";
import { SCOPES } from "../../pipeline/store/catalog/types.ts";
import { buildCatalog, buildFixture, USERS } from "./fixture.ts";

describe("schema.graphql", () => {
  it("matches the schema the code builds (run `npm run graphql-schema` after a change)", () => {
    const committed = readFileSync(new URL("../../schema.graphql", import.meta.url), "utf8");
    expect(committed).toBe(printedSchema());
  });

  it("has the interface's operations with their exact arguments", () => {
    const sdl = printedSchema();
    const q = graphqlSchema().getQueryType()!.getFields();
    const args = Object.fromEntries(
      q.stockRatings.args.map((a) => [
        a.name,
        `${a.type}${a.defaultValue !== undefined ? ` = ${JSON.stringify(a.defaultValue)}` : ""}`,
      ]),
    );
    expect(args).toMatchObject({ first: "Int = 50", orderBy: 'String = "-total_rating"', date: "String" });
    expect(String(q.stockRatings.type)).toBe("StockRatingNodeConnection");
    expect(q.watchlistsForUser.args).toEqual([]);
    expect(q.profile.args).toEqual([]);
    expect(sdl).toMatch(/watchlistsForUser: \[WatchlistNode!\]/);
    expect(sdl).toMatch(/profile: ProfileNode/);
    expect(sdl).toMatch(/addToWatchlist\(input: AddToWatchlistInput!\): AddToWatchlistPayload/);
    expect(sdl).toMatch(
      /input AddToWatchlistInput \{[^}]*stockIds: \[String\][^}]*stockTickers: \[String\][^}]*watchlistId: ID!/s,
    );
    for (const m of [
      "createWatchlist",
      "updateWatchlist",
      "deleteWatchlist",
      "removeFromWatchlist",
      "createPortfolio",
      "updatePortfolio",
      "deletePortfolio",
      "updateProfile",
    ]) {
      const cap = m[0].toUpperCase() + m.slice(1);
      expect(sdl).toContain(`${m}(input: ${cap}Input!): ${cap}Payload`);
      expect(sdl).toMatch(
        new RegExp(
          `type ${cap}Payload \\{[^}]*clientMutationId: String[^}]*errors: \\[FieldError!\\][^}]*success: Boolean!`,
          "s",
        ),
      );
    }
  });
});

describe("batching", () => {
  it("a page of 200 nodes reads each per-node field with one accessor call", async () => {
    const fx = buildFixture({ stocks: 260 });
    const calls: Record<string, number> = {};
    // the accessors, counted
    const counted = Object.fromEntries(
      Object.entries(access).map(([k, f]) => [
        k,
        typeof f === "function"
          ? (...a: unknown[]) => {
              calls[k] = (calls[k] ?? 0) + 1;
              return (f as (...x: unknown[]) => unknown)(...a);
            }
          : f,
      ]),
    ) as typeof access;
    const catalog = buildCatalog(fx);
    const caller = {
      user: USERS[0],
      key: { id: "k", userId: "u1", scopes: [...SCOPES], createdAt: "", revokedAt: null },
    };
    const ctx = createContext({ snapshot: fx.snapshot, catalog, caller }, null, null);
    ctx.batch = createBatchReaders(fx.snapshot, counted);
    const r = await execute({
      schema: graphqlSchema(),
      document: parse(
        `{ stocks(first: 200) { edges { node { ticker rating { totalRating } financials { ` +
          `income { fiscalYear } } } } } }`,
      ),
      contextValue: ctx,
    });
    expect(r.errors).toBeUndefined();
    const edges = (
      r.data as { stocks: { edges: { node: { ticker: string; rating: { totalRating: string } | null } }[] } }
    ).stocks.edges;
    expect(edges).toHaveLength(200);
    // reference: the fixture's latest rating of the first stock, read directly
    const first = edges[0].node;
    const hist = fx.snapshot.ratingDates
      .map((d) => fx.snapshot.ratingsByDate.get(d)!.find((x) => x.ticker === first.ticker))
      .filter(Boolean);
    expect(first.rating?.totalRating).toBe(hist.at(-1)!.total_rating.toFixed(4));
    expect(calls).toEqual({ ratingsAsOf: 1, financialsOf: 1 });
  });
});
