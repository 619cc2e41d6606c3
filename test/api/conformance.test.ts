// Runs the shared structural conformance script (REST and GraphQL groups) against a real server
// over the fixture, when the script is present (CONFORMANCE_CHECK overrides its path).
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RATING_NAMES } from "../../pipeline/types.ts";
import { KEYS } from "./fixture.ts";
import { startTestServer, type TestServer } from "./helpers.ts";

const SCRIPT = process.env.CONFORMANCE_CHECK ?? "/work/shared/conformance/check.mjs";
const csvCell = (v: unknown) => (/[",\r\n]/.test(String(v)) ? `"${String(v).replaceAll('"', '""')}"` : String(v));

describe.skipIf(!existsSync(SCRIPT))("contract conformance script", () => {
  let s: TestServer;
  let dir: string;
  beforeAll(async () => {
    s = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), "api-conformance-"));
    const snap = s.fx.snapshot;
    const companies = [
      "ticker,name,sector,industry",
      ...snap.companies.map((c) => [c.ticker, c.name, c.sector, c.industry].map(csvCell).join(",")),
    ];
    const ratings = [`date,ticker,${RATING_NAMES.join(",")}`];
    for (const d of snap.ratingDates)
      for (const r of snap.ratingsByDate.get(d)!)
        ratings.push([d, r.ticker, ...RATING_NAMES.map((n) => r[n])].join(","));
    writeFileSync(join(dir, "companies.csv"), `${companies.join("\n")}\n`);
    writeFileSync(join(dir, "ratings.csv"), `${ratings.join("\n")}\n`);
  });
  afterAll(async () => {
    await s?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const group of ["rest", "graphql"]) {
    it(`passes every ${group} check`, async () => {
      const { stdout } = await promisify(execFile)(process.execPath, [
        SCRIPT,
        group,
        s.url,
        KEYS.alice,
        dir,
        KEYS.aliceRatingsOnly,
      ]).catch((e: { stdout: string }) => ({ stdout: e.stdout }));
      const fails = stdout.split("\n").filter((l) => l.startsWith("FAIL"));
      expect(fails).toEqual([]);
      expect(stdout).toMatch(/\d+ passed, 0 failed/);
    }, 120_000);
  }
});
