// The one configuration module: every variable the service reads, each bad value one line naming it.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../jobs/config.ts";
import { logFormat } from "../../jobs/log-format.ts";
import { ROOT, runScript } from "./process.ts";

const problems = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  throw new Error("loadConfig accepted it");
};

describe("loadConfig", () => {
  it("refuses a partition size or a DuckDB memory limit that is not one, one line per variable", () => {
    expect(problems({ TICKERS_PER_PARTITION: "abc", PIPELINE_DUCKDB_MEMORY: "lots" })).toEqual([
      'TICKERS_PER_PARTITION: must be a whole number (got "abc")',
      'PIPELINE_DUCKDB_MEMORY: must be a size such as 1024MB or 2GB (got "lots")',
    ]);
  });

  it("puts the catalog on PostgreSQL with DATABASE_URL; a refused URL is not echoed (it may hold a password)", () => {
    const url = "postgres://svc:secret@db.internal:5432/accounts";
    expect(loadConfig({ DATABASE_URL: url, DATA_DIR: "/tmp/s" })).toMatchObject({
      databaseUrl: url,
      catalogLocation: url,
    });
    expect(loadConfig({ DATA_DIR: "/tmp/s" })).toMatchObject({
      databaseUrl: null,
      catalogLocation: "/tmp/s/catalog.duckdb",
    });
    expect(problems({ DATABASE_URL: "mysql://svc:secret@db/accounts" })).toEqual([
      "DATABASE_URL: must be a postgres:// or postgresql:// URL",
    ]);
  });

  it("refuses every malformed pipeline variable by name", () => {
    expect(problems({ TICKERS_PER_PARTITION: "2.5" })).toEqual([
      'TICKERS_PER_PARTITION: must be a whole number (got "2.5")',
    ]);
    expect(problems({ TICKERS_PER_PARTITION: "0" })).toEqual(['TICKERS_PER_PARTITION: must be at least 1 (got "0")']);
    expect(problems({ PIPELINE_WORKERS: "many" })).toEqual(['PIPELINE_WORKERS: must be a whole number (got "many")']);
    expect(problems({ PIPELINE_WORKER_THREADS: "0" })).toEqual([
      'PIPELINE_WORKER_THREADS: must be at least 1 (got "0")',
    ]);
    expect(problems({ PIPELINE_FLOW: "no" })).toEqual(['PIPELINE_FLOW: must be "0" or "1" (got "no")']);
    expect(problems({ PIPELINE_APPEND: "off" })).toEqual(['PIPELINE_APPEND: must be "0" or "1" (got "off")']);
    expect(problems({ START_WORKER: "no" })).toEqual(['START_WORKER: must be "0" or "1" (got "no")']);
    expect(problems({ START_REDIS_REPORTED_DOWN: "yes" })).toEqual([
      'START_REDIS_REPORTED_DOWN: must be "1" or unset (got "yes")',
    ]);
  });

  it("keeps the store and the generated sample out of the source folders by default", () => {
    const d = loadConfig({});
    expect(d.dataDir).toBe(resolve("store"));
    expect(d.sampleDir).toBe(join(resolve("store"), "sample"));
    expect(d.dataDir).not.toBe(resolve("data")); // the generator's code is there
    expect(readFileSync(join(ROOT, ".gitignore"), "utf8").split("\n")).toContain("/store/");
    const c = loadConfig({ DATA_DIR: "/srv/ratings" });
    expect([c.dataDir, c.sampleDir]).toEqual(["/srv/ratings", "/srv/ratings/sample"]);
  });

  it("reads the pipeline variables, with the documented defaults when unset or empty", () => {
    const d = loadConfig({ PIPELINE_WORKERS: "", TICKERS_PER_PARTITION: "" });
    expect([d.pipelineWorkers, d.pipelineFlow, d.pipelineAppend, d.workerThreads, d.tickersPerPartition]).toEqual([
      null,
      true,
      true,
      1,
      undefined,
    ]);
    expect([d.stagingMemory, d.logFormat, d.redisReportedDown, d.startWorker]).toEqual(["1024MB", null, false, true]);
    const c = loadConfig({
      PIPELINE_WORKERS: "0",
      PIPELINE_FLOW: "0",
      PIPELINE_APPEND: "0",
      PIPELINE_WORKER_THREADS: "2",
      TICKERS_PER_PARTITION: "10",
      PIPELINE_DUCKDB_MEMORY: "1.5GB",
      LOG_FORMAT: "json",
      START_REDIS_REPORTED_DOWN: "1",
      START_WORKER: "0",
    });
    expect([c.pipelineWorkers, c.pipelineFlow, c.pipelineAppend, c.workerThreads, c.tickersPerPartition]).toEqual([
      0,
      false,
      false,
      2,
      10,
    ]);
    expect([c.stagingMemory, c.logFormat, c.redisReportedDown, c.startWorker]).toEqual(["1.5GB", "json", true, false]);
  });

  it("leaves a bad LOG_FORMAT to loadConfig's report: the logger falls back on the terminal's choice", () => {
    expect(problems({ LOG_FORMAT: "xml" })[0]).toMatch(/^LOG_FORMAT: .*\(got "xml"\)$/);
    expect(logFormat({ LOG_FORMAT: "xml" }, false)).toBe("json");
  });
});

describe("a bad variable stops the commands", () => {
  it("npm run pipeline: one line per problem and exit code 64", () => {
    const r = runScript("jobs/cli/pipeline.ts", ["status"], {
      DATA_DIR: mkdtempSync(join(tmpdir(), "config-")),
      TICKERS_PER_PARTITION: "abc",
      PIPELINE_DUCKDB_MEMORY: "lots",
    });
    expect(r.code).toBe(64);
    expect(r.stderr).toBe(
      "invalid configuration:\n" +
        '  - TICKERS_PER_PARTITION: must be a whole number (got "abc")\n' +
        '  - PIPELINE_DUCKDB_MEMORY: must be a size such as 1024MB or 2GB (got "lots")\n',
    );
  }, 60_000);
});
