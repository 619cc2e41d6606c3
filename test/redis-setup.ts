// vitest globalSetup: probes TEST_REDIS_URL once for the whole run. Without a Redis answering, the
// Redis-backed tests skip (test/redis.ts) after this one line, instead of each failing slowly on
// retries; with REQUIRE_REDIS=1 (CI: .ci/run) an unreachable Redis fails the run instead.
import type { TestProject } from "vitest/node";
import { probeRedis, redisUrlForLog } from "../jobs/host/redis-health.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** Why Redis-backed tests skip; "" when TEST_REDIS_URL answers. */
    redisUnreachable: string;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const url = process.env.TEST_REDIS_URL || "redis://127.0.0.1:6379";
  const why = await probeRedis(url, 2_000);
  const said = why ? `Redis at ${redisUrlForLog(url)} does not answer (${why})` : "";
  if (why && process.env.REQUIRE_REDIS === "1")
    throw new Error(`${said}, and REQUIRE_REDIS=1: the Redis-backed tests must run`);
  if (why) console.warn(`${said}: the Redis-backed tests are skipped (start Redis or set TEST_REDIS_URL)`);
  project.provide("redisUnreachable", said);
}
