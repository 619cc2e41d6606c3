// Rate limits shared through a real Redis (127.0.0.1:6379): two servers count one key together;
// with Redis unreachable, the in-memory insurance limiter keeps serving and limiting.
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { noRedis, TEST_REDIS } from "../redis.ts";
import { KEYS } from "./fixture.ts";
import { fixtureWithMetrics, startTestServer } from "./helpers.ts";

const REDIS_URL = TEST_REDIS;
const fx = fixtureWithMetrics({ stocks: 20, days: 80 });
const clients: Redis[] = [];
afterAll(async () => {
  for (const c of clients) c.disconnect();
});

describe("rate limits through Redis", () => {
  it.skipIf(noRedis)("two servers share one key's limit", async () => {
    const prefix = `rl:test:${randomBytes(6).toString("hex")}`;
    const a = new Redis(REDIS_URL, { enableOfflineQueue: false, lazyConnect: true });
    const b = new Redis(REDIS_URL, { enableOfflineQueue: false, lazyConnect: true });
    clients.push(a, b);
    await Promise.all([a.connect(), b.connect()]);
    const one = await startTestServer({ fx, rateLimit: { points: 5, durationSec: 60, redis: a, prefix } });
    const two = await startTestServer({ fx, rateLimit: { points: 5, durationSec: 60, redis: b, prefix } });
    try {
      const remaining: string[] = [];
      for (const srv of [one, two, one, two, one]) {
        const r = await srv.api("benchmarks");
        expect(r.status).toBe(200);
        remaining.push(r.headers.get("x-ratelimit-remaining")!);
      }
      expect(remaining).toEqual(["4", "3", "2", "1", "0"]);
      const refused = await two.api("benchmarks");
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      // another key has its own count, on either server
      expect((await one.api("benchmarks", { api_key: KEYS.bob })).status).toBe(200);
      // the counter lives in Redis under the prefix, with the window as its expiry
      const keys = await a.keys(`${prefix}:*`);
      expect(keys.length).toBe(2);
      const ttl = await a.pttl(keys[0]);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);
      await a.del(...keys);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it("keeps serving, and limiting per process, when Redis is unreachable", async () => {
    // A port nothing listens on; no offline queue, so every command fails at once.
    const down = new Redis("redis://127.0.0.1:1", {
      enableOfflineQueue: false,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    down.on("error", () => undefined); // the refused connection is the point of this test
    clients.push(down);
    const srv = await startTestServer({
      fx,
      rateLimit: { points: 3, durationSec: 60, redis: down, prefix: "rl:test:down" },
    });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await srv.api("benchmarks")).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
    } finally {
      await srv.close();
    }
  });
});
