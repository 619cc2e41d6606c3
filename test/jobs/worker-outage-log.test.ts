// The worker process (`npm run pipeline -- worker`) with a Redis that does not answer: ioredis
// retries every second or two, and the log must say so once, not once per retry.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, spawnScript } from "./process.ts";

const dataDir = mkdtempSync(join(tmpdir(), "worker-outage-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const redisLines = (out: string) => out.split("\n").filter((l) => /Redis/.test(l));

describe("the worker process while Redis is away", () => {
  it("one line for the outage, one when Redis is back; SIGTERM still ends it", async () => {
    const port = await freePort();
    const worker = spawnScript("jobs/cli/pipeline.ts", ["worker"], {
      REDIS_URL: `redis://127.0.0.1:${port}`,
      DATA_DIR: dataDir,
      QUEUE_PREFIX: "outage-log",
      LOG_FORMAT: "json",
    });
    try {
      await worker.waitFor(/waiting for jobs/, 30_000);
      // About five seconds of retries: before, each retry logged a line (24 in the first minute).
      await new Promise((r) => setTimeout(r, 5_000));
      const during = redisLines(worker.output());
      expect(during).toHaveLength(1);
      expect(JSON.parse(during[0]!).msg).toBe("pipeline worker: Redis unreachable; retrying quietly");

      const redis = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", ""], {
        stdio: "ignore",
      });
      try {
        await worker.waitFor(/Redis reachable again/, 20_000);
        expect(redisLines(worker.output()).map((l) => JSON.parse(l).msg)).toEqual([
          "pipeline worker: Redis unreachable; retrying quietly",
          "pipeline worker: Redis reachable again",
        ]);
      } finally {
        redis.kill("SIGTERM");
      }
      // Redis gone again, then SIGTERM: closing must not wait on the dead connection.
      await new Promise((r) => setTimeout(r, 500));
      worker.child.kill("SIGTERM");
      expect(await worker.exited(10_000)).toEqual({ code: 0, signal: null });
    } finally {
      worker.child.kill("SIGKILL");
    }
  }, 60_000);
});
