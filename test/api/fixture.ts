// Hand-built Snapshot and in-memory CatalogReader for the API tests and the HTTP benchmark.
// Numbers come from a seeded PRNG (mulberry32), so every run sees the same data:
//   - `stocks` companies (default 260) with generated tickers, a few named for search ("app"),
//     one dotted ticker (BRK.B), one unknown market cap, ties in total_rating;
//   - `days` weekdays from 2015-01-02 of random-walk closes (some stocks start late);
//   - rating dates about every 60 trading days; one stock is missing from the latest date;
//   - one index benchmark (id "1") with one missing date; one predefined portfolio (101) and one
//     user portfolio per user (201 alice, 202 bob), with holdings selected like the contract says;
//   - financials for the first three tickers; full-period metric rows for every stock (optional).
import { createHash } from "node:crypto";
import type {
  ApiKeyInfo,
  CatalogReader,
  CatalogWriter,
  Scope,
  User,
  UserPortfolio,
  Watchlist,
  WatchlistFields,
} from "../../pipeline/store/catalog/types.ts";
import { SCOPES } from "../../pipeline/store/catalog/types.ts";
import type {
  BenchmarkResult,
  CompanyFinancials,
  FinancialSet,
  PortfolioResult,
  Snapshot,
} from "../../pipeline/store/snapshot/model.ts";
import { metricsKey } from "../../pipeline/store/snapshot/model.ts";
import {
  type Company,
  type HoldingRow,
  type MetricRow,
  type PortfolioRules,
  RATING_NAMES,
  type RatingRow,
  type ReturnSeries,
} from "../../pipeline/types.ts";

export function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export { weekdays } from "../fixtures/tiny-source.ts";

import { weekdays } from "../fixtures/tiny-source.ts";

const SECTORS = ["Technology", "Energy", "Health Care", "Financials", "Industrials"];
const INDUSTRIES = ["Software", "Hardware", "Oil & Gas", "Pharma", "Banks", "Insurance", "Machinery", "Airlines"];
const WORDS = [
  "Alpha",
  "Beta",
  "Gamma",
  "Delta",
  "Orion",
  "Vega",
  "Nova",
  "Atlas",
  "Zenith",
  "Summit",
  "Harbor",
  "Pioneer",
];
const SPECIAL_NAMES: Record<number, [string, string]> = {
  0: ["AAPL", "Apple Inc."],
  7: ["APLE", "Apple Hospitality REIT"],
  12: ["AMAT", "Applied Materials, Inc."],
  30: ["BRK.B", 'Berkshire Hathaway "B"'],
};

function tickerFor(i: number): string {
  const a = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const base = a[Math.floor(i / 26 / 26) % 26] + a[Math.floor(i / 26) % 26] + a[i % 26];
  return i % 7 === 3 ? `${base}X` : `Q${base}`;
}

export interface FixtureOptions {
  stocks?: number;
  days?: number;
  seed?: number;
  id?: string;
  /** Precompute full-period metric rows (needs pipeline/analytics). */
  metrics?: (subject: ReturnSeries, column: string, benchmark?: { name: string; returns: ReturnSeries }) => MetricRow[];
  alignBenchmark?: (dates: string[], bench: { dates: string[]; levels: Float64Array }) => ReturnSeries;
  /** Metric rows are precomputed for these tickers only (all when omitted). */
  metricTickers?: string[];
}

export interface Fixture {
  snapshot: Snapshot;
  closes: Map<string, Float64Array>;
  dates: string[];
  userPortfolios: UserPortfolio[];
}

export const USERS: User[] = [
  { id: "u1", email: "alice@example.com", firstName: "Alice", lastName: "A", phoneNumber: "+1 555 0101" },
  { id: "u2", email: "bob@example.com", firstName: "Bob", lastName: "B", phoneNumber: "+1 555 0102" },
];

export const PREDEFINED_RULES: PortfolioRules = {
  id: "101",
  name: "Top rated",
  description: "Best total rating, growth at least 3",
  rebalanceFrequency: 3,
  maxStocks: 10,
  maxStocksCriteria: "total_rating",
  maxStocksCriteriaOrder: "descending",
  maxSectorConcentration: 0.3,
  ranges: { growth_rating: [3, 10] },
};
export const ALICE_RULES: UserPortfolio = {
  id: "201",
  ownerId: "u1",
  createdAt: "2015-03-01T12:00:00.000Z",
  name: "Alice growth",
  description: "growth >= 5, returns >= 2",
  rebalanceFrequency: 1,
  maxStocks: 8,
  maxStocksCriteria: "growth_rating",
  maxStocksCriteriaOrder: "descending",
  maxSectorConcentration: null,
  ranges: { growth_rating: [5, 10], return_rating: [2, 10] },
};
export const BOB_RULES: UserPortfolio = {
  id: "202",
  ownerId: "u2",
  createdAt: "2015-04-01T08:30:00.000Z",
  name: "Bob value",
  description: "cheap",
  rebalanceFrequency: 6,
  maxStocks: 5,
  maxStocksCriteria: "valuation_rating",
  maxStocksCriteriaOrder: "ascending",
  maxSectorConcentration: null,
  ranges: {},
};

export function buildFixture(opts: FixtureOptions = {}): Fixture {
  const nStocks = opts.stocks ?? 260;
  const nDays = opts.days ?? 300;
  const rnd = mulberry32(opts.seed ?? 42);
  const dates = weekdays("2015-01-02", nDays);

  // companies
  const companies: Company[] = [];
  for (let i = 0; i < nStocks; i++) {
    const [ticker, name] = SPECIAL_NAMES[i] ?? [
      tickerFor(i),
      `${WORDS[i % WORDS.length]} ${WORDS[(i * 5 + 3) % WORDS.length]} ${i}`,
    ];
    const s = i % SECTORS.length;
    const ind = (i * 3) % INDUSTRIES.length;
    companies.push({
      id: String(1000 + ((i * 7919) % 9000)),
      ticker,
      name,
      sector: SECTORS[s],
      sectorId: s + 1,
      industry: INDUSTRIES[ind],
      industryId: ind + 1,
      sharesOutstanding: 1e6 * (1 + i),
      marketCap: i === 5 ? null : Math.round(1e8 + rnd() * 5e11),
    });
  }
  companies.sort((a, b) => (a.ticker < b.ticker ? -1 : 1));

  // prices and returns
  const closes = new Map<string, Float64Array>();
  const stockReturns = new Map<string, ReturnSeries>();
  const starts = new Map<string, number>();
  companies.forEach((c, k) => {
    const start = k % 25 === 7 ? Math.min(nDays - 2, 40) : 0;
    starts.set(c.ticker, start);
    const px = new Float64Array(nDays).fill(NaN);
    let p = 10 + rnd() * 300;
    const drift = (rnd() - 0.45) * 0.002;
    for (let d = start; d < nDays; d++) {
      if (d > start) p *= 1 + drift + (rnd() - 0.5) * 0.04;
      px[d] = Math.round(p * 100) / 100;
    }
    closes.set(c.ticker, px);
    const ds = dates.slice(start);
    const r = new Float64Array(ds.length);
    for (let d = 1; d < ds.length; d++) r[d] = px[start + d] / px[start + d - 1] - 1;
    stockReturns.set(c.ticker, { dates: ds, returns: r });
  });

  // ratings
  const ratingDates: string[] = [];
  for (let d = 20; d < nDays; d += 60) ratingDates.push(dates[d]);
  const ratingsByDate = new Map<string, RatingRow[]>();
  ratingDates.forEach((date, di) => {
    const rows: RatingRow[] = [];
    const dayIndex = dates.indexOf(date);
    for (const [k, c] of companies.entries()) {
      if (starts.get(c.ticker)! > dayIndex) continue;
      if (di === ratingDates.length - 1 && k === 9) continue; // missing from the latest date
      const row = { date, ticker: c.ticker } as RatingRow;
      for (const n of RATING_NAMES) row[n] = Math.round(rnd() * 10 * 1e6) / 1e6;
      if (k >= 3 && k <= 5) row.total_rating = 7.25; // ties, broken by ticker
      if (k === 6) row.return_rating = 10; // bound inclusive
      if (k === 8) row.growth_rating = 7; // bound inclusive
      rows.push(row);
    }
    ratingsByDate.set(date, rows);
  });

  // benchmark: equal-weight index level, one date missing
  const levels: number[] = [];
  const bdates: string[] = [];
  let level = 100;
  for (let d = 0; d < nDays; d++) {
    if (d > 0) {
      let sum = 0;
      let n = 0;
      for (const c of companies) {
        const px = closes.get(c.ticker)!;
        if (Number.isFinite(px[d]) && Number.isFinite(px[d - 1])) {
          sum += px[d] / px[d - 1] - 1;
          n++;
        }
      }
      level *= 1 + (n ? sum / n : 0);
    }
    if (d === 10) continue;
    bdates.push(dates[d]);
    levels.push(level);
  }
  const benchmark: BenchmarkResult = {
    id: "1",
    name: "Equal Weight Index",
    description: "All stocks, equal weight, daily",
    rebalanceFrequency: 0,
    series: "EW",
    levels: { dates: bdates, levels: Float64Array.from(levels) },
  };

  // portfolios
  const companyByTicker = new Map(companies.map((c) => [c.ticker.toUpperCase(), c]));
  const select = (rules: PortfolioRules, date: string): HoldingRow[] => {
    const di = dates.indexOf(date);
    const rows = (ratingsByDate.get(date) ?? []).filter((r) =>
      RATING_NAMES.every((n) => !rules.ranges[n] || (r[n] >= rules.ranges[n]![0] && r[n] <= rules.ranges[n]![1])),
    );
    const crit = rules.maxStocksCriteria as (typeof RATING_NAMES)[number];
    const dir = rules.maxStocksCriteriaOrder === "descending" ? -1 : 1;
    rows.sort((a, b) => dir * (a[crit] - b[crit]) || (a.ticker < b.ticker ? -1 : 1));
    const cap =
      rules.maxSectorConcentration && rules.maxSectorConcentration < 1
        ? Math.floor(rules.maxSectorConcentration * rules.maxStocks)
        : Infinity;
    const perSector = new Map<string, number>();
    const out: HoldingRow[] = [];
    for (const r of rows) {
      if (out.length >= rules.maxStocks) break;
      const sec = companyByTicker.get(r.ticker)!.sector;
      if ((perSector.get(sec) ?? 0) >= cap) continue;
      perSector.set(sec, (perSector.get(sec) ?? 0) + 1);
      const { date: _d, ticker, ...vals } = r;
      out.push({ date, ticker, price: closes.get(ticker)![di], ...vals });
    }
    return out.sort((a, b) => (a.ticker < b.ticker ? -1 : 1));
  };
  const portfolioResult = (rules: PortfolioRules, ownerId: string | null, createdAt: string): PortfolioResult => {
    const first = dates.indexOf(ratingDates[0]);
    const prev = ratingDates[ratingDates.length - 1];
    const holdings = select(rules, prev);
    const ds = dates.slice(first);
    const r = new Float64Array(ds.length);
    const members = select(rules, ratingDates[0]).map((h) => closes.get(h.ticker)!);
    for (let d = 1; d < ds.length; d++) {
      let s = 0;
      for (const px of members) s += px[first + d] / px[first + d - 1] - 1;
      r[d] = members.length ? s / members.length : 0;
    }
    const lastDay = dates.length - 1;
    const today = select(rules, prev).map((h) => ({
      ...h,
      date: dates[lastDay],
      price: closes.get(h.ticker)![lastDay],
    }));
    return {
      rules,
      ownerId,
      createdAt,
      previousRebalanceDate: prev,
      nextRebalanceDate: "2016-03-31",
      returns: { dates: ds, returns: r },
      holdings,
      todayDate: dates[lastDay],
      todayHoldings: today,
    };
  };
  const strip = (u: UserPortfolio): PortfolioRules => {
    const { ownerId: _o, createdAt: _c, ...rules } = u;
    return rules;
  };
  const portfolios = new Map<string, PortfolioResult>([
    ["101", portfolioResult(PREDEFINED_RULES, null, `${ratingDates[0]}T00:00:00.000Z`)],
    ["201", portfolioResult(strip(ALICE_RULES), "u1", ALICE_RULES.createdAt)],
    ["202", portfolioResult(strip(BOB_RULES), "u2", BOB_RULES.createdAt)],
  ]);

  // financials for three tickers
  const financials = new Map<string, CompanyFinancials>();
  companies.slice(0, 3).forEach((c, k) => {
    const set = (period: string, years: number[]): FinancialSet => ({
      income: years.map((y) => ({
        "Fiscal Year": y,
        "Fiscal Period": period,
        "Report Date": `${y}-12-31`,
        Revenue: 1000 * (k + 1) * (y - 2010),
        "Cost of Revenue": 400,
        "Gross Profit": 600,
        "Net Income (Common)": 120,
      })),
      balance: years.map((y) => ({
        "Fiscal Year": y,
        "Fiscal Period": period,
        "Report Date": `${y}-12-31`,
        "Cash, Cash Equivalents & Short Term Investments": 500,
        "Total Assets": 9000,
        "Total Liabilities & Equity": 9000,
      })),
      cashflow: years.map((y) => ({
        "Fiscal Year": y,
        "Fiscal Period": period,
        "Report Date": `${y}-12-31`,
        "Net Cash from Operating Activities": 300,
        "Net Change in Cash": null,
      })),
      derived: years.map((y) => ({
        "Fiscal Year": y,
        "Fiscal Period": period,
        "Report Date": `${y}-12-31`,
        "Publish Date": `${y + 1}-02-15`,
        "Restated Date": `${y + 1}-02-15`,
        EBITDA: 700,
        "Gross Profit Margin": "0.6000",
        "Piotroski F-Score": 6,
      })),
    });
    financials.set(c.ticker, {
      annual: set("FY", [2013, 2014]),
      quarterly: set("Q4", [2014]),
      ttm: set("TTM", [2014]),
    });
  });

  const snapshot: Snapshot = {
    id: opts.id ?? "snap-fixture-1",
    createdAt: "2016-02-26T06:00:00.000Z",
    sourceId: "fixture",
    lastPriceDate: dates[nDays - 1],
    companies,
    companyByTicker,
    companyById: new Map(companies.map((c) => [c.id, c])),
    ratingDates,
    ratingsByDate,
    stockReturns,
    benchmarks: [benchmark],
    benchmarkById: new Map([[benchmark.id, benchmark]]),
    portfolios,
    metrics: new Map(),
    financials,
  };

  if (opts.metrics && opts.alignBenchmark) {
    const tickers = opts.metricTickers ?? companies.map((c) => c.ticker);
    for (const t of tickers) {
      const r = stockReturns.get(t)!;
      snapshot.metrics.set(metricsKey("stock", t), opts.metrics(r, t));
      snapshot.metrics.set(
        metricsKey("stock", t, "1"),
        opts.metrics(r, t, { name: benchmark.name, returns: opts.alignBenchmark(r.dates, benchmark.levels) }),
      );
    }
    for (const [id, p] of portfolios) {
      snapshot.metrics.set(metricsKey("portfolio", id), opts.metrics(p.returns, "Portfolio"));
      snapshot.metrics.set(
        metricsKey("portfolio", id, "1"),
        opts.metrics(p.returns, "Portfolio", {
          name: benchmark.name,
          returns: opts.alignBenchmark(p.returns.dates, benchmark.levels),
        }),
      );
    }
  }
  return { snapshot, closes, dates, userPortfolios: [ALICE_RULES, BOB_RULES] };
}

// ---- catalog

const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

export const KEYS = {
  alice: "srk_alice_full_key_0123456789abcdef",
  bob: "srk_bob_full_key_0123456789abcdef00",
  aliceRatingsOnly: "srk_alice_ratings_only_0123456789ab",
  aliceNoAnalytics: "srk_alice_no_analytics_0123456789ab",
  revoked: "srk_revoked_key_0123456789abcdef000",
} as const;

/**
 * CatalogReader and CatalogWriter over plain maps; keys are held only as SHA-256 hashes, as the
 * real catalog does. Writes follow the real catalog's rules (ids from counters, tickers
 * upper-cased and not repeated, duplicate email refused); test/store/catalog.test.ts covers those.
 */
export class MemoryCatalog implements CatalogReader, CatalogWriter {
  users = new Map(USERS.map((u) => [u.id, u]));
  keysByHash = new Map<string, ApiKeyInfo>();
  watchlists = new Map<string, Watchlist>();
  portfolios = new Map<string, UserPortfolio>();

  addKey(key: string, userId: string, scopes: readonly Scope[], revoked = false): void {
    this.authMemo.clear();
    this.keysByHash.set(sha256(key), {
      id: `k${this.keysByHash.size + 1}`,
      userId,
      scopes: [...scopes],
      createdAt: "2015-01-01T00:00:00.000Z",
      revokedAt: revoked ? "2015-02-01T00:00:00.000Z" : null,
    });
  }

  private authMemo = new Map<string, { user: User; key: ApiKeyInfo } | null>();
  authenticate(presentedKey: string) {
    // Memoised as the real catalog does (the benchmark serves from this class); addKey clears it.
    const hit = this.authMemo.get(presentedKey);
    if (hit !== undefined) return hit;
    const key = this.keysByHash.get(sha256(presentedKey));
    const user = key && !key.revokedAt ? this.users.get(key.userId) : undefined;
    const found = key && user ? { user, key } : null;
    this.authMemo.set(presentedKey, found);
    return found;
  }
  getUser(id: string) {
    return this.users.get(id) ?? null;
  }
  watchlistsOf(userId: string) {
    return [...this.watchlists.values()]
      .filter((w) => w.ownerId === userId)
      .sort((a, b) => Number(a.id) - Number(b.id));
  }
  watchlist(id: string) {
    return this.watchlists.get(id) ?? null;
  }
  userPortfoliosOf(userId: string) {
    return [...this.portfolios.values()]
      .filter((p) => p.ownerId === userId)
      .sort((a, b) => Number(a.id) - Number(b.id));
  }
  userPortfolio(id: string) {
    return this.portfolios.get(id) ?? null;
  }
  changedAt = new Map<string, string>();
  rebalanceRequestedAt(id: string) {
    return this.changedAt.get(id) ?? null;
  }

  // ---- writes
  private nextWatchlist = 100;
  private nextPortfolio = 5001;
  /** Every write, in order (what a test asserts did or did not happen). */
  writes: string[] = [];
  async updateUser(id: string, patch: Partial<Omit<User, "id">>) {
    const u = this.users.get(id)!;
    if (
      patch.email &&
      [...this.users.values()].some((o) => o.id !== id && o.email.toLowerCase() === patch.email!.toLowerCase())
    )
      throw Object.assign(new Error("email taken"), { code: "conflict" });
    const next = { ...u, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) };
    this.users.set(id, next);
    this.authMemo.clear();
    this.writes.push(`updateUser ${id}`);
    return next;
  }
  async createWatchlist(ownerId: string, w: WatchlistFields & { tickers?: string[] }) {
    const id = String(this.nextWatchlist++);
    const tickers = [...new Set((w.tickers ?? []).map((t) => t.toUpperCase()))];
    this.watchlists.set(id, {
      id,
      ownerId,
      name: w.name,
      description: w.description ?? "",
      private: w.private ?? true,
      createdAt: new Date().toISOString(),
      tickers,
    });
    this.writes.push(`createWatchlist ${id}`);
    return this.watchlists.get(id)!;
  }
  async updateWatchlist(id: string, patch: Partial<WatchlistFields>) {
    const w = this.watchlists.get(id)!;
    this.watchlists.set(id, { ...w, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) });
    this.writes.push(`updateWatchlist ${id}`);
    return this.watchlists.get(id)!;
  }
  async deleteWatchlist(id: string) {
    this.watchlists.delete(id);
    this.writes.push(`deleteWatchlist ${id}`);
  }
  async addToWatchlist(id: string, tickers: string[]) {
    const w = this.watchlists.get(id)!;
    const fresh = [...new Set(tickers.map((t) => t.toUpperCase()))].filter((t) => !w.tickers.includes(t));
    this.watchlists.set(id, { ...w, tickers: [...w.tickers, ...fresh] });
    this.writes.push(`addToWatchlist ${id} ${fresh.join(",")}`);
    return this.watchlists.get(id)!;
  }
  async removeFromWatchlist(id: string, tickers: string[]) {
    const w = this.watchlists.get(id)!;
    const drop = new Set(tickers.map((t) => t.toUpperCase()));
    this.watchlists.set(id, { ...w, tickers: w.tickers.filter((t) => !drop.has(t)) });
    this.writes.push(`removeFromWatchlist ${id} ${[...drop].join(",")}`);
    return this.watchlists.get(id)!;
  }
  async createUserPortfolio(ownerId: string, rules: Omit<PortfolioRules, "id">) {
    const id = String(this.nextPortfolio++);
    const now = new Date().toISOString();
    this.portfolios.set(id, { ...rules, id, ownerId, createdAt: now });
    this.changedAt.set(id, now);
    this.writes.push(`createUserPortfolio ${id}`);
    return this.portfolios.get(id)!;
  }
  async updateUserPortfolio(id: string, rules: PortfolioRules) {
    const p = this.portfolios.get(id)!;
    this.portfolios.set(id, { ...rules, id, ownerId: p.ownerId, createdAt: p.createdAt });
    this.changedAt.set(id, new Date().toISOString());
    this.writes.push(`updateUserPortfolio ${id}`);
    return this.portfolios.get(id)!;
  }
  async deleteUserPortfolio(id: string) {
    this.portfolios.delete(id);
    this.changedAt.delete(id);
    this.writes.push(`deleteUserPortfolio ${id}`);
  }
}

export function buildCatalog(fx: Fixture): MemoryCatalog {
  const c = new MemoryCatalog();
  c.addKey(KEYS.alice, "u1", SCOPES);
  c.addKey(KEYS.bob, "u2", SCOPES);
  c.addKey(KEYS.aliceRatingsOnly, "u1", ["ratings:read"]);
  c.addKey(
    KEYS.aliceNoAnalytics,
    "u1",
    SCOPES.filter((s) => s !== "analytics:read"),
  );
  c.addKey(KEYS.revoked, "u1", SCOPES, true);
  const t = fx.snapshot.companies.map((x) => x.ticker);
  c.watchlists.set("1", {
    id: "1",
    ownerId: "u1",
    name: "Alice tech",
    description: "a few",
    private: true,
    createdAt: "2015-05-01T10:00:00.000Z",
    tickers: [t[40], t[2], t[17], t[0], t[33], "BRK.B"],
  });
  c.watchlists.set("2", {
    id: "2",
    ownerId: "u2",
    name: "Bob private",
    description: "secret",
    private: true,
    createdAt: "2015-05-02T10:00:00.000Z",
    tickers: [t[5], t[6]],
  });
  c.watchlists.set("3", {
    id: "3",
    ownerId: "u2",
    name: "Bob public",
    description: "shared",
    private: false,
    createdAt: "2015-05-03T10:00:00.000Z",
    tickers: [t[7]],
  });
  for (const p of fx.userPortfolios) c.portfolios.set(p.id, p);
  return c;
}
