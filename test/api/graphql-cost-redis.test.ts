// The GraphQL cost budget per key is kept where the request limit is: through a real Redis
// (127.0.0.1:6379), two servers spend one key's points together.
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, expect, it } from "vitest";
import { gql } from "./graphql-helpers.ts";
import { fixtureWithMetrics, startTestServer } from "./helpers.ts";

const REDIS_URL = process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const clients: Redis[] = [];
afterAll(async () => {
  for (const c of clients) c.disconnect();
});

it("two servers spend one key's GraphQL budget together (Redis)", async () => {
  const fx = fixtureWithMetrics({ stocks: 20, days: 80 });
  const prefix = `rl:test:${randomBytes(6).toString("hex")}`;
  const [a, b] = [0, 1].map(() => new Redis(REDIS_URL, { enableOfflineQueue: false, lazyConnect: true }));
  clients.push(a, b);
  await Promise.all([a.connect(), b.connect()]);
  const deps = { graphqlCostPerMinute: 7 };
  const one = await startTestServer({ fx, rateLimit: { points: 1000, durationSec: 60, redis: a, prefix }, deps });
  const two = await startTestServer({ fx, rateLimit: { points: 1000, durationSec: 60, redis: b, prefix }, deps });
  try {
    const q = `{ stock(ticker: "AAPL") { rating { totalRating } } }`; // 2 points: stock 1 + rating 1
    const remaining: number[] = [];
    for (const srv of [one, two, one]) {
      const r = await gql(srv, q);
      expect(r.status).toBe(200);
      remaining.push(r.json.extensions.cost.remaining);
    }
    expect(remaining).toEqual([5, 3, 1]);
    const refused = await gql(two, q);
    expect(refused.status).toBe(429);
    expect(refused.json.errors[0].extensions.cost).toMatchObject({ requested: 2, limit: 7, remaining: 0 });
    // the points live in Redis under the request limit's prefix + ":gql-cost", the minute as expiry
    const keys = await a.keys(`${prefix}:gql-cost:*`);
    expect(keys.length).toBe(1);
    const ttl = await a.pttl(keys[0]);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
    await a.del(...(await a.keys(`${prefix}:*`)));
  } finally {
    await one.close();
    await two.close();
  }
});
