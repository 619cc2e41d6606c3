// `npm start` with WEB_CONCURRENCY > 1 and an unreachable Redis: the primary prints the one
// start-up line and tells its forked server processes so (START_REDIS_REPORTED_DOWN, read through
// jobs/config.ts), so they do not print it again, and they serve.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeTinySource } from "../fixtures/tiny-source.ts";
import { type Proc, spawnScript } from "./process.ts";

const KEY = "test-demo-key-0123456789";
let p: Proc | null = null;
afterAll(() => {
  if (p && p.child.exitCode === null) p.child.kill("SIGKILL");
});

describe("forked server processes and an unreachable Redis", () => {
  it("one unreachable line for all processes; every process serves", async () => {
    p = spawnScript("jobs/host/start.ts", [], {
      PORT: "0",
      DEMO_API_KEY: KEY,
      LOG_LEVEL: "info",
      WEB_CONCURRENCY: "2",
      DATA_DIR: mkdtempSync(join(tmpdir(), "start-forked-")),
      SOURCE_DIR: writeTinySource(),
      REDIS_URL: "redis://127.0.0.1:1",
    });
    const base = (await p.waitFor(/serving (http:\/\/127\.0\.0\.1:\d+)\/data\/v1/, 120_000))[1];
    // Each forked process opens the snapshot on its own: 503 until it has. Then several requests,
    // which the cluster hands to both processes in turn.
    const statuses: number[] = [];
    for (let t0 = Date.now(); statuses.slice(-6).join() !== "200,200,200,200,200,200" && Date.now() - t0 < 30_000; ) {
      const r = await fetch(`${base}/data/v1/stock_ratings?limit=2&api_key=${KEY}`, {
        headers: { connection: "close" },
      });
      statuses.push(r.status);
      if (r.status !== 200) await new Promise((res) => setTimeout(res, 200));
    }
    expect(statuses.slice(-6)).toEqual([200, 200, 200, 200, 200, 200]);
    await new Promise((r) => setTimeout(r, 3_000)); // the workers' own start-up lines are out by now
    expect(
      p
        .output()
        .split("\n")
        .filter((l) => /unreachable/i.test(l)),
    ).toHaveLength(1);
    p.child.kill("SIGTERM");
    expect((await p.exited(15_000)).code).toBe(0);
  }, 180_000);
});
