// A run's staging records are read through their schemas: a damaged or foreign record is a
// StagingRecordError (code staging_record_corrupt) naming the file and what is wrong, where the
// step reads it, instead of a wrong value travelling on into the publish.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pipelineErrorCode } from "../../pipeline/domain/errors.ts";
import { readSourceRecord, SOURCE_FILES, writeSourceRecord } from "../../pipeline/sources/append-plan.ts";
import { readPlan } from "../../pipeline/stages/flow-steps.ts";
import { financialsParts } from "../../pipeline/stages/fundamentals-step.ts";
import { isAlive, readHolder } from "../../pipeline/store/coordination/liveness.ts";
import {
  createStagingRecord,
  emptyStaging,
  readStagingRecord,
  StagingRecordError,
  stagingBeat,
  stagingLayout,
  stagingPath,
  writeStagingRecord,
} from "../../pipeline/store/snapshot/staging-layout.ts";

function staging() {
  const dataDir = mkdtempSync(join(tmpdir(), "staging-layout-"));
  const layout = stagingLayout(stagingPath(dataDir, "flow-test"));
  mkdirSync(layout.flowDir, { recursive: true });
  return layout;
}

function caught(f: () => unknown): StagingRecordError {
  try {
    f();
  } catch (e) {
    if (e instanceof StagingRecordError) return e;
    throw e;
  }
  throw new Error("expected a StagingRecordError");
}

describe("staging records", () => {
  it("names the paths of a staging folder beside and inside it", () => {
    const l = staging();
    expect(l.tmp).toBe(`${l.out}.tmp`);
    expect(l.aside).toBe(`${l.out}.flow`);
    expect(l.plan).toBe(join(l.out, ".flow", "plan.json"));
    expect(l.publishingAside).toBe(join(`${l.out}.flow`, "publishing.json"));
  });

  it("reads what was written, byte for byte as before (plain JSON), and null when absent", () => {
    const l = staging();
    expect(readStagingRecord("run", l.run)).toBeNull();
    const run = { ingestJob: 1, baseVersion: 2, ingestMs: 3, startedAt: 4, sourceId: "f1" };
    writeStagingRecord("run", l.run, run);
    expect(readFileSync(l.run, "utf8")).toBe(JSON.stringify(run));
    expect(readStagingRecord("run", l.run)).toEqual(run);
    writeStagingRecord("financials", l.financials, { parts: 3 }, true);
    expect(readFileSync(l.financials, "utf8")).toBe('{"parts":3}');
    expect(financialsParts(l.out)).toEqual({ planned: 3, written: 0 });
  });

  it("gives a typed error with a code for a record that is not JSON", () => {
    const l = staging();
    writeFileSync(l.plan, '{"counts": {"companies": 3,'); // torn by a full disk, say
    const e = caught(() => readPlan(l.out));
    expect(e.code).toBe("staging_record_corrupt");
    expect(pipelineErrorCode(e)).toBe("staging_record_corrupt");
    expect(e.path).toBe(l.plan);
    expect(e.message).toMatch(/^the record .*plan\.json is corrupt \(not JSON: /);
  });

  it("gives a typed error naming each field a record gets wrong", () => {
    const l = staging();
    writeFileSync(l.run, JSON.stringify({ ingestJob: "yesterday", baseVersion: 2, ingestMs: 3 }));
    const e = caught(() => readStagingRecord("run", l.run));
    expect(e.code).toBe("staging_record_corrupt");
    expect(e.message).toContain("ingestJob: Invalid input: expected number, received string");
    expect(e.message).toContain("startedAt: Invalid input: expected number, received undefined");
    writeFileSync(l.financials, JSON.stringify({ parts: -1 }));
    expect(caught(() => financialsParts(l.out)).message).toContain("parts: Too small");
    const plan = { counts: {}, lastPriceDate: "2024-01-02", ranges: [], portfolioIds: [], portfolios: [{ rules: 5 }] };
    writeFileSync(l.plan, JSON.stringify(plan));
    const p = caught(() => readPlan(l.out)).message;
    expect(p).toContain("counts.companies:");
    expect(p).toContain("portfolios.0.rules: expected portfolio rules with an id");
  });

  it("reads a heartbeat's holder through its schema: a foreign record counts by its age only", () => {
    const l = staging();
    const beat = stagingBeat(join(l.out, "..", ".."), "flow-test");
    mkdirSync(join(beat, ".."), { recursive: true });
    writeFileSync(beat, JSON.stringify({ host: hostname(), pid: process.pid, startedAt: "2026-01-01T00:00:00Z" }));
    expect(readHolder(beat)).toEqual({ host: hostname(), pid: process.pid, startedAt: "2026-01-01T00:00:00Z" });
    writeFileSync(beat, JSON.stringify({ host: hostname(), pid: "not a pid", startedAt: 1 }));
    expect(readHolder(beat)).toBeNull();
    // fresh, so alive by its age (its pid cannot settle it)
    expect(isAlive(beat, 60_000)).toBe(true);
    expect(isAlive(beat, 60_000, Date.now() + 120_000)).toBe(false);
  });

  it("reads a snapshot's source record through its schema too", () => {
    const l = staging();
    mkdirSync(l.out, { recursive: true });
    expect(readSourceRecord(l.out)).toBeNull();
    const files = [{ path: "prices.csv", size: 10, sha256: "ab" }];
    writeSourceRecord(l.out, files);
    expect(readSourceRecord(l.out)).toEqual(files);
    writeFileSync(join(l.out, SOURCE_FILES), JSON.stringify({ files: [{ path: 1, size: 10 }] }));
    const e = caught(() => readSourceRecord(l.out));
    expect(e.code).toBe("staging_record_corrupt");
    expect(e.message).toContain("files.0.path: Invalid input: expected string, received number");
    expect(e.message).toContain("files.0.sha256: Invalid input: expected string, received undefined");
  });

  it("creates a flow's decision once: the first writer's record stays, and a later one reads it", () => {
    const l = staging();
    expect(createStagingRecord("decision", l.decision, { kind: "append" })).toEqual({ kind: "append" });
    expect(createStagingRecord("decision", l.decision, { kind: "full" })).toEqual({ kind: "append" });
    expect(readFileSync(l.decision, "utf8")).toBe('{"kind":"append"}');
    // nothing left beside it by either writer
    expect(readdirSync(l.flowDir)).toEqual(["decision.json"]);
    writeFileSync(l.decision, JSON.stringify({ kind: "maybe" }));
    expect(caught(() => createStagingRecord("decision", l.decision, { kind: "full" })).message).toContain("kind:");
  });

  it("empties a staging folder but for the flow's decision", () => {
    const l = staging();
    createStagingRecord("decision", l.decision, { kind: "append" });
    writeStagingRecord("run", l.run, { ingestJob: 1, baseVersion: 2, ingestMs: 3, startedAt: 4 });
    mkdirSync(join(l.out, "stock_returns"), { recursive: true });
    writeFileSync(join(l.out, "stock_returns", "part-0000.parquet"), "x");
    writeFileSync(join(l.out, "prices.parquet"), "x");
    emptyStaging(l.out);
    expect(readdirSync(l.out)).toEqual([".flow"]);
    expect(readdirSync(l.flowDir)).toEqual(["decision.json"]);
    expect(readStagingRecord("decision", l.decision)).toEqual({ kind: "append" });
    emptyStaging(join(l.out, "absent"));
    expect(existsSync(join(l.out, "absent"))).toBe(false);
  });
});
