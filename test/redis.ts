// For the Redis-backed tests: the shared Redis's URL, and whether it answered the one probe of
// this run (test/redis-setup.ts). `describe.skipIf(noRedis)` skips a suite that needs it.
import { inject } from "vitest";

export const TEST_REDIS = process.env.TEST_REDIS_URL || "redis://127.0.0.1:6379";
/** True when TEST_REDIS_URL did not answer at the start of the run. */
export const noRedis = (inject("redisUnreachable") ?? "") !== "";
