// The queued run command's two promises: `--force` recomputes even while the completed job of the
// same source is still in Redis (a second snapshot is published), and `--timeout` holds when Redis
// goes away mid-wait (the command ends by its timeout, says where the job stood and that Redis was
// unreachable, and exits 2).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Worker } from "bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { dispatchRun } from "../../jobs/queue/dispatch.ts";
import { runFlowIds } from "../../jobs/queue/flow.ts";
import { jobId, WHOLE } from "../../jobs/queue/job-types.ts";
import { pipelineQueue } from "../../jobs/queue/queue.ts";
import { startPipelineWorker } from "../../jobs/worker/worker.ts";
import { sourceStamp } from "../../pipeline/sources/fingerprint.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { readManifest } from "../../pipeline/store/snapshot/snapshots.ts";
import { writeTinySource } from "../fixtures/tiny-source.ts";
import { cleanUpQueues, freePort, OwnRedis, type Proc, spawnTs, stagingFolders, TEST_REDIS } from "./jobs-fixture.ts";

const prefixBase = `test-queue-cmd-${process.pid}-${Date.now()}`;
const workers: Worker[] = [];
const procs: Proc[] = [];
const redises: OwnRedis[] = [];

afterAll(async () => {
  for (const p of procs) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  // stop() waits for an exit: one killed by the test has already exited
  for (const r of redises) if (r.proc?.signalCode === null) await r.stop();
  await cleanUpQueues(prefixBase, workers);
});

async function store() {
  const dataDir = mkdtempSync(join(tmpdir(), "queue-cmd-"));
  return { dataDir, catalog: await Catalog.open(join(dataDir, "catalog.duckdb")) };
}

describe("run --force through the queue", () => {
  for (const flow of [true, false]) {
    it(`recomputes while the completed ${flow ? "flow" : "run job"} of the same source is still in Redis`, async () => {
      const { dataDir, catalog } = await store();
      const prefix = `${prefixBase}-force-${flow ? "flow" : "job"}`;
      workers.push(startPipelineWorker({ redisUrl: TEST_REDIS, dataDir, catalog, log: silentLog, prefix }));
      const sourceDir = writeTinySource();
      const opts = {
        dataDir,
        sourceDir,
        catalog,
        log: silentLog,
        redisUrl: TEST_REDIS,
        prefix,
        flow,
        timeoutMs: 60_000,
      };
      const first = await dispatchRun(opts);
      expect(first.skipped).toBeUndefined();
      const id = flow ? runFlowIds(sourceStamp(sourceDir)).parent : jobId("run", sourceStamp(sourceDir), WHOLE);
      const q = pipelineQueue(TEST_REDIS, prefix);
      try {
        // The precondition of the report: the completed job holding the published snapshot is still there.
        const done = await q.getJob(id);
        expect(await done?.getState()).toBe("completed");
        expect(done?.returnvalue.snapshotId).toBe(first.snapshotId);
        // Without --force: nothing recomputed.
        const again = await dispatchRun(opts);
        expect(again).toMatchObject({ snapshotId: first.snapshotId, skipped: true });
        // With it: computed again and published as a second snapshot, by the same job id.
        const forced = await dispatchRun({ ...opts, force: true });
        expect(forced.skipped).toBeUndefined();
        expect(forced.snapshotId).not.toBe(first.snapshotId);
        const m = readManifest(dataDir)!;
        expect(m.snapshotId).toBe(forced.snapshotId);
        expect(m.log!.map((e) => [e.snapshotId, e.job])).toEqual([
          [forced.snapshotId, id],
          [first.snapshotId, id],
        ]);
        expect(m.log![0].version).toBeGreaterThan(m.log![1].version);
        expect((await q.getJob(id))?.returnvalue.snapshotId).toBe(forced.snapshotId);
      } finally {
        await q.close();
      }
    }, 90_000);
  }
});

describe("--timeout with Redis gone mid-wait", () => {
  it("the run command ends by its timeout, says where the job stood and that Redis is away, exit 2", async () => {
    const redis = new OwnRedis(await freePort(), false);
    redises.push(redis);
    await redis.start();
    const dataDir = mkdtempSync(join(tmpdir(), "queue-cmd-timeout-"));
    const sourceDir = writeTinySource();
    const env = { REDIS_URL: redis.url, DATA_DIR: dataDir, QUEUE_PREFIX: `${prefixBase}-timeout` };
    const timeoutS = 10; // room, after the note, for the wait to notice Redis gone (pings) before it gives up
    const cli = spawnTs("jobs/cli/pipeline.ts", ["run", "--source", sourceDir, "--timeout", String(timeoutS)], env);
    procs.push(cli);
    // No worker: the flow's parent waits for its children. The note comes after the enqueue, so the
    // command's timeout was already counting then.
    const seen = await until(() => cli.err.some((l) => /no pipeline worker is connected/.test(l)), 60_000);
    redis.proc!.kill("SIGKILL");
    const code = await Promise.race([cli.exited, sleep(120_000).then(() => "hung" as const)]);
    const ended = Date.now();
    const said = [...cli.out, ...cli.err].join("\n");
    expect(code, said).toBe(2);
    // Ends by the timeout (counted from before the note) plus a small margin for closing the connections.
    expect(ended - seen, said).toBeLessThan(timeoutS * 1000 + 3_000);
    const id = runFlowIds(sourceStamp(sourceDir)).parent;
    expect(said).toContain(
      `Redis at the queue is unreachable; still waiting for job ${id} (last seen waiting-children)`,
    );
    expect(said).toMatch(
      new RegExp(
        `gave up waiting for job ${id.replaceAll(".", "\\.")} after ${timeoutS} s: ` +
          "Redis at the queue has been unreachable for the last \\d+ s \\(the job was last seen waiting-children\\); " +
          "nothing was published by it so far",
      ),
    );
    expect(readManifest(dataDir)).toBeNull();
    expect(stagingFolders(dataDir)).toEqual([]);
  }, 150_000);
});

const silentLog = { info: () => undefined, warn: () => undefined };
const sleep = (ms: number) => new Promise<void>((res) => setTimeout(res, ms));

/** Polls `f` until true; returns the time it first was. */
async function until(f: () => boolean, ms: number): Promise<number> {
  const stop = Date.now() + ms;
  while (!f()) {
    if (Date.now() > stop) throw new Error("condition not met in time");
    await sleep(20);
  }
  return Date.now();
}
