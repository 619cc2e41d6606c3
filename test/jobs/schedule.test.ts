// The nightly scheduler is validated when registered: a missing source, a bad cron or an unknown
// zone is one plain line and exit 2 from the CLI; a good one is stored in Redis with its zone.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { NIGHTLY_SCHEDULER, pipelineQueue } from "../../jobs/queue/queue.ts";
import { ScheduleError, scheduleNightly, validateSchedule } from "../../jobs/queue/schedule.ts";
import { writeTinySource } from "../fixtures/tiny-source.ts";
import { noRedis } from "../redis.ts";
import { spawnTs } from "./jobs-fixture.ts";

const REDIS = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const prefix = `test-sched-${process.pid}-${Date.now()}`;

afterAll(async () => {
  if (noRedis) return;
  const r = new Redis(REDIS);
  const keys = await r.keys(`${prefix}*`);
  if (keys.length) await r.del(...keys);
  await r.quit();
});

describe("schedule validation", () => {
  const src = writeTinySource();
  it("computes the next run in the zone", () => {
    // 02:00 in Paris on 16 Jan 2024 is 01:00 UTC (CET, UTC+1); asked at noon UTC on the 15th.
    expect(validateSchedule(src, "0 2 * * *", "Europe/Paris", new Date("2024-01-15T12:00:00Z")).toISOString()).toBe(
      "2024-01-16T01:00:00.000Z",
    );
    // In July Paris is UTC+2 (CEST).
    expect(validateSchedule(src, "30 2 * * 1-5", "Europe/Paris", new Date("2024-07-05T12:00:00Z")).toISOString()).toBe(
      "2024-07-08T00:30:00.000Z",
    );
  });

  it.each([
    ["a missing source", join(tmpdir(), "no-such-source-dir"), "0 2 * * *", "UTC", /is not a directory/],
    [
      "a source without prices",
      mkdtempSync(join(tmpdir(), "empty-src-")),
      "0 2 * * *",
      "UTC",
      /has no companies table/,
    ],
    ["a minute out of range", src, "61 2 * * *", "UTC", /cron "61 2 \* \* \*" is not a valid pattern/],
    ["too few fields", src, "0 2 *", "UTC", /cron "0 2 \*" is not a valid pattern .*3 field/],
    ["an unknown zone", src, "0 2 * * *", "Mars/Olympus", /time zone "Mars\/Olympus" is not an IANA zone/],
  ])("refuses %s with one line", (_what, dir, cron, tz, re) => {
    let err: unknown;
    try {
      validateSchedule(dir, cron, tz);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ScheduleError);
    expect((err as Error).message).toMatch(re);
    expect((err as Error).message).not.toContain("\n");
  });

  it.skipIf(noRedis)("registers the scheduler with its pattern and zone in Redis", async () => {
    const { next } = await scheduleNightly(REDIS, src, "15 3 * * *", prefix, "America/New_York");
    expect(new Date(next).getUTCMinutes()).toBe(15);
    const q = pipelineQueue(REDIS, prefix);
    try {
      const s = await q.getJobScheduler(NIGHTLY_SCHEDULER);
      expect(s).toMatchObject({
        pattern: "15 3 * * *",
        tz: "America/New_York",
        template: { data: { sourceDir: src } },
      });
    } finally {
      await q.close();
    }
  });

  it.skipIf(noRedis)(
    "schedule --remove takes the scheduler out of Redis, and says when there was none",
    async () => {
      const env = { REDIS_URL: REDIS, QUEUE_PREFIX: `${prefix}-rm`, DATA_DIR: mkdtempSync(join(tmpdir(), "sched-")) };
      const add = spawnTs("jobs/cli/pipeline.ts", ["schedule", "--source", src], env);
      expect(await add.exited).toBe(0);
      const q = pipelineQueue(REDIS, `${prefix}-rm`);
      try {
        expect(await q.getJobScheduler(NIGHTLY_SCHEDULER)).toMatchObject({ pattern: "0 2 * * *" });
        const rm = spawnTs("jobs/cli/pipeline.ts", ["schedule", "--remove"], env);
        expect(await rm.exited).toBe(0);
        expect(rm.out).toEqual(["nightly run unscheduled"]);
        expect(await q.getJobScheduler(NIGHTLY_SCHEDULER)).toBeUndefined();
        const again = spawnTs("jobs/cli/pipeline.ts", ["schedule", "--remove"], env);
        expect(await again.exited).toBe(0);
        expect(again.out).toEqual(["no nightly run was scheduled; nothing to remove"]);
      } finally {
        await q.close();
      }
    },
    60_000,
  );

  it.skipIf(noRedis)(
    "the CLI says what is wrong in one line and exits 2, registering nothing",
    async () => {
      const p = spawnTs("jobs/cli/pipeline.ts", ["schedule", "--cron", "0 25 * * *", "--source", src], {
        REDIS_URL: REDIS,
        QUEUE_PREFIX: `${prefix}-cli`,
        DATA_DIR: mkdtempSync(join(tmpdir(), "sched-")),
      });
      expect(await p.exited).toBe(2);
      expect(p.err).toEqual([
        expect.stringMatching(/^cron "0 25 \* \* \*" is not a valid pattern .*nothing was scheduled$/),
      ]);
      const q = pipelineQueue(REDIS, `${prefix}-cli`);
      try {
        expect(await q.getJobScheduler(NIGHTLY_SCHEDULER)).toBeUndefined();
      } finally {
        await q.close();
      }
    },
    60_000,
  );
});
