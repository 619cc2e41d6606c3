// Events of one publish and who receives them, over two hand-made snapshots (fixture.ts) and a
// real webhook store (DuckDB file). Every expected value is read off the rows below by hand.
import { createHash } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WatchedTicker } from "../../pipeline/events/fanout.ts";
import { eventsOfPublish } from "../../pipeline/events/index.ts";
import { EmbeddedWebhookStore } from "../../pipeline/store/webhooks/embedded.ts";
import { tmp, writeSnapshot } from "./fixture.ts";

const TICKERS = ["A", "B", "C", "D", "E", "F"];
let prevDir: string;
let curDir: string;
let store: EmbeddedWebhookStore;
const hooks: Record<string, string> = {};

// Watchlists: u1 has w1 [A, B, D]; u2 has w2 [C, D] and w3 [C]; u3 has w4 [A] (but u3's webhook is
// snapshot.published only); u4 has w5 [E] and no webhook at all.
const WATCHES: WatchedTicker[] = [
  ["u1", "w1", "A"],
  ["u1", "w1", "b"],
  ["u1", "w1", "D"],
  ["u2", "w2", "C"],
  ["u2", "w2", "D"],
  ["u2", "w3", "C"],
  ["u3", "w4", "A"],
  ["u4", "w5", "E"],
].map(([userId, watchlistId, ticker]) => ({ userId, watchlistId, ticker }));
const asked: string[][] = [];
const watchedBy = async (users: string[]) => {
  asked.push([...users].sort());
  return WATCHES.filter((w) => users.includes(w.userId));
};

beforeAll(async () => {
  const root = tmp("events-");
  prevDir = await writeSnapshot(root, {
    id: "2024-02-01",
    tickers: TICKERS,
    ratings: [
      ["A", "2024-01-31", 2.0],
      ["B", "2024-01-31", 4.5],
      ["C", "2024-01-31", 3.0],
      ["D", "2024-01-31", 3.0],
      ["E", "2024-01-31", 1.0],
    ],
    holdings: [
      ["p1", "2024-01-31", "A", 90, 2.0],
      ["p1", "2024-01-31", "B", 40, 4.5],
      ["p2", "2024-01-31", "D", 10, 3.0],
      ["p3", "2024-01-31", "E", 10, 1.0],
    ],
    owners: { p1: "u1", p2: "u2", p3: null },
  });
  curDir = await writeSnapshot(root, {
    id: "2024-03-01",
    tickers: [...TICKERS, "G"],
    ratings: [
      ["A", "2024-02-29", 3.5], // +1.5, crosses 3
      ["B", "2024-02-29", 4.0], // -0.5
      ["C", "2024-02-29", 3.0, 5], // total the same, a sub-rating moved
      ["D", "2024-02-29", 3.0], // a new date, the same values: no event
      ["E", "2024-02-29", 2.0], // changed, on u4's watchlist only (no webhook)
      ["F", "2024-02-29", 1.0], // newly rated, on no watchlist
    ],
    holdings: [
      ["p1", "2024-01-31", "A", 90, 2.0], // the old rebalance stays in the table
      ["p1", "2024-01-31", "B", 40, 4.5],
      ["p1", "2024-02-29", "A", 100, 3.5],
      ["p1", "2024-02-29", "C", 50, 3.0],
      ["p2", "2024-01-31", "D", 10, 3.0],
      ["p3", "2024-02-29", "F", 10, 1.0],
    ],
    owners: { p1: "u1", p2: "u2", p3: null },
  });
  store = await EmbeddedWebhookStore.open(join(tmp("events-store-"), "webhooks.duckdb"));
  const make = async (name: string, owner: string, eventTypes: string[], filters = {}) => {
    const { webhook } = await store.create(owner, {
      url: `https://${name}.example.com/hook`,
      eventTypes: eventTypes as never,
      filters,
    });
    hooks[name] = webhook.id;
  };
  await make("u1", "u1", ["rating.changed", "portfolio.rebalanced"], { tradeValue: 10_000 });
  await make("u2", "u2", ["rating.changed", "portfolio.rebalanced"]);
  await make("u3", "u3", ["snapshot.published"]);
  await make("u1big", "u1", ["rating.changed"], { minTotalChange: 1 });
  await make("u1level", "u1", ["rating.changed"], { levels: [4.25] });
});

afterAll(() => undefined);

const evtId = (snap: string, type: string, subject: string) =>
  `evt_${createHash("sha256").update(`${snap}|${type}|${subject}`).digest("hex").slice(0, 32)}`;

describe("events of a publish", () => {
  it("with no webhook subscribed: the events, and no delivery (the fan-out's empty result)", async () => {
    const none = { subscribers: async () => [] };
    const { events, deliveries } = await eventsOfPublish({ currentDir: curDir, previousDir: prevDir }, none, watchedBy);
    expect(events.filter((e) => e.type === "snapshot.published")).toHaveLength(1);
    expect(deliveries).toEqual([]);
  });

  it("rating.changed for each ticker whose latest rating values differ (a new date alone is none)", async () => {
    const { events } = await eventsOfPublish({ currentDir: curDir, previousDir: prevDir }, store, watchedBy);
    const ratings = events.filter((e) => e.type === "rating.changed");
    expect(ratings.map((e) => e.data.ticker)).toEqual(["A", "B", "C", "E", "F"]);
    const a = ratings[0];
    expect(a.id).toBe(evtId("2024-03-01", "rating.changed", "A"));
    expect(a.timestamp).toBe("2024-03-01T02:00:00.000Z");
    expect(a.snapshot).toBe("2024-03-01");
    expect(a.data.previous).toMatchObject({ date: "2024-01-31", totalRating: 2, returnRating: 3 });
    expect(a.data.current).toMatchObject({ date: "2024-02-29", totalRating: 3.5, macroRating: 3 });
    expect(ratings[2].data.current.returnRating).toBe(5);
    expect(ratings[4].data.previous).toBeNull();
  });

  it("portfolio.rebalanced for a portfolio with a new rebalance, with the stocks added and removed", async () => {
    const { events } = await eventsOfPublish({ currentDir: curDir, previousDir: prevDir }, store, watchedBy);
    const p = events.filter((e) => e.type === "portfolio.rebalanced");
    expect(p.map((e) => e.data.portfolioId)).toEqual(["p1", "p3"]);
    expect(p[0].data).toEqual({
      portfolioId: "p1",
      rebalanceDate: "2024-02-29",
      previousRebalanceDate: "2024-01-31",
      holdings: [
        { ticker: "A", price: 100, totalRating: 3.5 },
        { ticker: "C", price: 50, totalRating: 3 },
      ],
      added: ["C"],
      removed: ["B"],
    });
  });

  it("snapshot.published counts what changed; a publish computed again has the same ids", async () => {
    const one = await eventsOfPublish({ currentDir: curDir, previousDir: prevDir }, store, watchedBy);
    const two = await eventsOfPublish({ currentDir: curDir, previousDir: prevDir }, store, watchedBy);
    expect(two.events.map((e) => e.id)).toEqual(one.events.map((e) => e.id));
    expect(new Set(one.events.map((e) => e.id)).size).toBe(one.events.length);
    const s = one.events.find((e) => e.type === "snapshot.published")!;
    expect(s.id).toBe(evtId("2024-03-01", "snapshot.published", "2024-03-01"));
    expect(s.data).toEqual({
      snapshotId: "2024-03-01",
      previousSnapshotId: "2024-02-01",
      sourceId: "src-2024-03-01",
      createdAt: "2024-03-01T02:00:00.000Z",
      counts: { companies: 7 },
      changes: { ratingsChanged: 5, portfoliosRebalanced: 2, tickersAdded: ["G"], tickersRemoved: [] },
    });
  });

  it("the first publish of a store has no rating or rebalance events", async () => {
    const { events } = await eventsOfPublish({ currentDir: curDir, previousDir: null }, store, watchedBy);
    expect(events.map((e) => e.type)).toEqual(["snapshot.published"]);
  });
});

describe("fan-out", () => {
  it("three watched stocks changed: exactly their owners' webhooks, each with its own watchlists only", async () => {
    const { deliveries } = await eventsOfPublish({ currentDir: curDir, previousDir: prevDir }, store, watchedBy);
    // only the users with a rating.changed webhook are asked for their watchlists
    expect(asked.at(-1)).toEqual(["u1", "u2"]);
    const got = deliveries.map((d) => {
      const b = JSON.parse(d.body);
      return [d.webhookId, b.type, b.data.ticker ?? b.data.portfolioId ?? b.data.snapshotId, b.data.watchlists];
    });
    expect(got.sort()).toEqual(
      [
        // u1 watches A, B (w1): A +1.5, B -0.5
        [hooks.u1, "rating.changed", "A", ["w1"]],
        [hooks.u1, "rating.changed", "B", ["w1"]],
        [hooks.u1, "portfolio.rebalanced", "p1", undefined],
        // minimum change 1: A only; level 4.25: B went 4.5 → 4.0 (A 2.0 → 3.5 stays below)
        [hooks.u1big, "rating.changed", "A", ["w1"]],
        [hooks.u1level, "rating.changed", "B", ["w1"]],
        // u2 watches C on w2 and w3; p2 did not rebalance
        [hooks.u2, "rating.changed", "C", ["w2", "w3"]],
        [hooks.u3, "snapshot.published", "2024-03-01", undefined],
      ].sort(),
    );
    for (const d of deliveries) {
      const text = d.body;
      const own = d.webhookId === hooks.u2 ? ["w2", "w3"] : ["w1"];
      for (const w of ["w1", "w2", "w3", "w4", "w5"].filter((x) => !own.includes(x)))
        expect(text.includes(`"${w}"`), `${d.webhookId} carries ${w}`).toBe(false);
    }
  });

  it("a rebalance's trades are portfolio_trades' for the webhook's value", async () => {
    const { deliveries } = await eventsOfPublish({ currentDir: curDir, previousDir: prevDir }, store, watchedBy);
    const b = JSON.parse(deliveries.find((d) => d.eventType === "portfolio.rebalanced")!.body);
    // 10,000 USD over two stocks: 5,000 each; A at 100 → 50 shares, C at 50 → 100 shares
    expect(b.data.tradeValue).toBe(10_000);
    expect(b.data.trades).toEqual([
      {
        date: "2024-02-29",
        id: 1,
        ticker: "A",
        name: "A Inc.",
        price: 100,
        quantity: 50,
        value: 5000,
        pct: 0.5,
        order_type: "Buy",
      },
      {
        date: "2024-02-29",
        id: 3,
        ticker: "C",
        name: "C Inc.",
        price: 50,
        quantity: 100,
        value: 5000,
        pct: 0.5,
        order_type: "Buy",
      },
    ]);
  });

  it("a disabled webhook receives nothing", async () => {
    await store.update(hooks.u3, { enabled: false });
    const { deliveries } = await eventsOfPublish({ currentDir: curDir, previousDir: prevDir }, store, watchedBy);
    expect(deliveries.some((d) => d.webhookId === hooks.u3)).toBe(false);
    await store.update(hooks.u3, { enabled: true });
  });
});
