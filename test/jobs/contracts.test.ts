// The job contracts (jobs/queue/contracts.ts): a worker fails a job whose data its name's schema refuses,
// at once and with the schema's words, instead of a cast that breaks somewhere inside a stage; and
// every name the code enqueues has a contract and a processor.
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Job, Queue, Worker } from "bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { JOB_CONTRACTS, JOB_NAMES, JobContractError, parseJobData } from "../../jobs/queue/contracts.ts";
import { FLOW_JOBS } from "../../jobs/queue/flow.ts";
import { addJob, pipelineQueue } from "../../jobs/queue/queue.ts";
import { PROCESSORS } from "../../jobs/worker/processors/index.ts";
import { startPipelineWorker } from "../../jobs/worker/worker.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { readManifest } from "../../pipeline/store/snapshot/snapshots.ts";
import { writeTinySource } from "../fixtures/tiny-source.ts";
import { noRedis } from "../redis.ts";
import { cleanUpQueues, ROOT, silent, stagingFolders, TEST_REDIS, waitFor } from "./jobs-fixture.ts";

const prefixBase = `test-contracts-${process.pid}-${Date.now()}`;
const workers: Worker[] = [];
const queues: Queue[] = [];

afterAll(async () => {
  await Promise.all(queues.map((q) => q.close()));
  await cleanUpQueues(prefixBase, workers);
});

/** The issues' text as the contract's own schema words it (what the worker must put in the reason). */
function schemaIssues(name: keyof typeof JOB_CONTRACTS, data: unknown): string {
  const r = JOB_CONTRACTS[name].data.safeParse(data);
  if (r.success) throw new Error("the test's data was meant to be malformed");
  return r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
}

async function failedReason(q: Queue, job: Job): Promise<{ reason: string; attempts: number }> {
  return waitFor(`job ${job.id} to fail`, async () => {
    if ((await job.getState()) !== "failed") return undefined;
    const j = (await q.getJob(job.id!)) as Job;
    return { reason: j.failedReason, attempts: j.attemptsMade };
  });
}

describe.skipIf(noRedis)("a worker and malformed job data", () => {
  it("fails the job at its first attempt with the schema's message", async () => {
    const prefix = `${prefixBase}-malformed`;
    const dataDir = mkdtempSync(join(tmpdir(), "contracts-"));
    const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
    workers.push(startPipelineWorker({ redisUrl: TEST_REDIS, dataDir, catalog, log: silent, prefix }));
    const q = pipelineQueue(TEST_REDIS, prefix);
    queues.push(q);
    // As an older or foreign producer might add them: past the types, straight onto the queue.
    const badBackfill = { sourceDir: "/nowhere", window: { from: 20240101 } };
    const badAnalytics = { sourceDir: "/nowhere", sourceVersion: "s1", run: "r1", range: { part: -1, from: null } };
    const b = await q.add("backfill", badBackfill, { jobId: "bad-backfill", attempts: 3 });
    const a = await q.add("analytics", badAnalytics, { jobId: "bad-analytics", attempts: 3 });
    const u = await q.add("frobnicate", {}, { jobId: "unknown-name", attempts: 3 });

    const fb = await failedReason(q, b);
    expect(fb.reason).toBe(`backfill job data invalid: ${schemaIssues("backfill", badBackfill)}`);
    // the schema's own words for the two wrong fields of the window
    expect(fb.reason).toContain("window.from: Invalid input: expected string, received number");
    expect(fb.reason).toContain("window.to: Invalid input: expected string, received undefined");
    expect(fb.attempts).toBe(1); // unrecoverable: the same data fails every retry
    const fa = await failedReason(q, a);
    expect(fa.reason).toBe(`analytics job data invalid: ${schemaIssues("analytics", badAnalytics)}`);
    expect(fa.reason).toContain("range.part:");
    expect(fa.reason).toContain("range.to:");
    expect(fa.attempts).toBe(1);
    const fu = await failedReason(q, u);
    expect(fu).toEqual({ reason: "unknown job frobnicate", attempts: 1 });
    // nothing was staged or published for any of them
    expect(stagingFolders(dataDir)).toEqual([]);
    expect(readManifest(dataDir)).toBeNull();
  });
});

describe.skipIf(noRedis)("a cancelled job", () => {
  it("stops at its next stage boundary, fails without a retry and publishes nothing", async () => {
    const prefix = `${prefixBase}-cancel`;
    const dataDir = mkdtempSync(join(tmpdir(), "contracts-cancel-"));
    const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
    const worker = startPipelineWorker({ redisUrl: TEST_REDIS, dataDir, catalog, log: silent, prefix });
    workers.push(worker);
    // Cancelled as soon as the run reports its first stage (ingest): the check after ingest stops it.
    const stages: string[] = [];
    worker.on("progress", (job, p) => {
      stages.push((p as { stage: string }).stage);
      if (stages.length === 1) expect(worker.cancelJob(job.id!, "asked by the test")).toBe(true);
    });
    const q = pipelineQueue(TEST_REDIS, prefix);
    queues.push(q);
    const sourceDir = writeTinySource();
    const job = await addJob(
      q,
      "run",
      { sourceDir, sourceVersion: "cancel-test", partition: "all" },
      {
        jobId: "cancelled-run",
        attempts: 3,
      },
    );
    const f = await failedReason(q, job);
    expect(f.attempts).toBe(1);
    expect(f.reason).toMatch(/^cancelled in stage [^\n]+: asked by the test$/);
    expect(stages[0]).toBe("ingest: reading and validating the source");
    // stopped at the boundary after ingest: the next stages never reported
    expect(stages).not.toContain("frames");
    expect(stages).not.toContain("analytics");
    expect(readManifest(dataDir)).toBeNull();
  });
});

describe("the contracts table", () => {
  it("parses good data and names every wrong field of bad data with a code", () => {
    expect(parseJobData("rebalance", { portfolioId: "p1", definitionVersion: "v", requestedAt: null })).toEqual({
      portfolioId: "p1",
      definitionVersion: "v",
      requestedAt: null,
    });
    let err: unknown;
    try {
      parseJobData("rebalance", { portfolioId: "", definitionVersion: 3 });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(JobContractError);
    expect((err as JobContractError).code).toBe("INVALID_JOB_DATA");
    expect((err as JobContractError).message).toMatch(
      /^rebalance job data invalid: portfolioId: .*; definitionVersion: /,
    );
    expect(() => parseJobData("nope", {})).toThrow(expect.objectContaining({ code: "UNKNOWN_JOB" }));
  });

  it("has a processor for every job name and a contract for every flow job", () => {
    expect(Object.keys(PROCESSORS).sort()).toEqual([...JOB_NAMES].sort());
    for (const name of Object.values(FLOW_JOBS)) expect(JOB_NAMES).toContain(name);
  });

  it("covers every name the code enqueues, and jobs are added only through addJob or the flow", () => {
    const files = readdirSync(join(ROOT, "jobs"), { recursive: true, encoding: "utf8" }).filter((f) =>
      f.endsWith(".ts"),
    );
    const named: string[] = [];
    for (const f of files) {
      const text = readFileSync(join(ROOT, "jobs", f), "utf8");
      // a job added by its name as a literal anywhere but through addJob
      if (f !== "queue.ts") expect(text, f).not.toMatch(/\.add\(\s*["'`]/);
      for (const m of text.matchAll(/addJob\(\s*\w+,\s*"(\w+)"/g)) named.push(m[1]!);
      for (const m of text.matchAll(/viaQueue\([^,]+,\s*"(\w+)"/g)) named.push(m[1]!);
    }
    expect(named.length).toBeGreaterThanOrEqual(3); // rebalance-requests (2) and dispatch's publish
    for (const n of named) expect(JOB_NAMES).toContain(n);
  });

  it("refuses, at type-check time, a name or data outside the contracts", () => {
    // Never called: `npm run typecheck` fails if these lines compile.
    const typed = (q: Queue) => {
      // @ts-expect-error not a job name of the contracts
      void addJob(q, "rebalanse", { portfolioId: "p", definitionVersion: "v" }, {});
      // @ts-expect-error a run's data for a rebalance job
      void addJob(q, "rebalance", { sourceDir: "/s" }, {});
    };
    expect(typeof typed).toBe("function");
  });
});
