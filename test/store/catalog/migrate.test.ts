// `npm run keys -- migrate-catalog --to postgres://…`: an embedded catalog copied to a fresh
// PostgreSQL database keeps its ids, hashed keys (the plain key still authenticates), watchlists,
// portfolios, rebalance failures and id map; a second run copies nothing; the sequences go on
// after the copied ids. The CLI runs as a user runs it (tsx jobs/cli/keys-cli.ts, DATA_DIR set).
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { Catalog, PgCatalog } from "../../../pipeline/store/catalog/catalog.ts";
import { dropDatabases, freshDatabase } from "./pg-fixture.ts";

afterAll(dropDatabases);
const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "..", "..", "..");

it("copies an embedded catalog to PostgreSQL with the same ids, idempotently, saying what it copied", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "catalog-move-"));
  const src = await Catalog.open(join(dataDir, "catalog.duckdb"));
  const a = await src.createUser({ email: "a@example.com", firstName: "A", lastName: "One", phoneNumber: "1" });
  const b = await src.createUser({ email: "b@example.com", firstName: "B", lastName: "Two", phoneNumber: "2" });
  const { key } = await src.createKey(a.id, ["ratings:read", "watchlists:write"]);
  const old = await src.createKey(b.id, ["ratings:read"]);
  await src.revokeKey(old.id);
  const w = await src.createWatchlist(a.id, { name: "W", tickers: ["MSFT", "AAPL"] });
  await src.createWatchlist(b.id, { name: "X", private: false });
  const p = await src.createUserPortfolio(a.id, {
    name: "P",
    description: "d",
    rebalanceFrequency: 1,
    maxStocks: 3,
    maxStocksCriteria: "total_rating",
    maxStocksCriteriaOrder: "descending",
    maxSectorConcentration: 0.4,
    ranges: {},
  });
  await src.recordRebalanceFailure(p.id, src.rebalanceRequestedAt(p.id), "no stocks");
  await src.assignIds("sector", ["Energy", "Tech"]);

  const url = await freshDatabase();
  const cli = () =>
    run("npx", ["tsx", "jobs/cli/keys-cli.ts", "migrate-catalog", "--to", url], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: "" },
    });
  const first = (await cli()).stdout;
  // 2 users, 2 keys, 2 watchlists, 2 items, 1 portfolio, 1 failure, 2 ids: all new
  expect(first).toContain("  users: 2 copied, 0 already there\n");
  expect(first).toContain("  api_keys: 2 copied, 0 already there\n");
  expect(first).toContain("  watchlists: 2 copied, 0 already there\n");
  expect(first).toContain("  watchlist_items: 2 copied, 0 already there\n");
  expect(first).toContain("  user_portfolios: 1 copied, 0 already there\n");
  expect(first).toContain("  rebalance_failures: 1 copied, 0 already there\n");
  expect(first).toContain("  id_map: 2 copied, 0 already there\n");
  expect((await cli()).stdout).toContain("  users: 0 copied, 2 already there\n");

  const dst = await PgCatalog.open(url);
  try {
    expect(dst.allUsers()).toEqual(src.allUsers());
    expect(dst.listKeys()).toEqual(src.listKeys());
    expect(dst.authenticate(key)?.user).toEqual(a);
    expect(dst.authenticate(old.key)).toBeNull();
    expect(dst.allWatchlists()).toEqual(src.allWatchlists());
    expect(dst.watchlist(w.id)?.tickers).toEqual(["MSFT", "AAPL"]);
    expect(dst.allUserPortfolios()).toEqual(src.allUserPortfolios());
    expect(dst.rebalanceFailure(p.id)).toEqual(src.rebalanceFailure(p.id));
    expect(Object.fromEntries(await dst.assignIds("sector", ["Tech", "Utilities"]))).toEqual({
      Energy: 1,
      Tech: 2,
      Utilities: 3,
    });
    // new rows continue after the copied ids
    expect((await dst.createUser({ email: "c@example.com", firstName: "", lastName: "", phoneNumber: "" })).id).toBe(
      "3",
    );
    expect((await dst.createWatchlist(a.id, { name: "Y" })).id).toBe("3");
    expect((await dst.createUserPortfolio(a.id, { ...p, name: "Q" })).id).toBe("5002");
  } finally {
    await dst.close();
  }
});
