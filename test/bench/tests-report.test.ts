// `npm run bench -- tests` (bench/tests.ts) reads vitest's JSON report: each file's time is its
// end minus its start, slowest first, and the sum line adds them. The report here is hand-made
// (three files, times chosen so the order differs from the report's), the sums done by hand.
import { describe, expect, it } from "vitest";
import { formatSuiteTimes, suiteTimes, type VitestReport } from "../../bench/tests.ts";

const report: VitestReport = {
  startTime: 1_000,
  numTotalTests: 6,
  numPassedTests: 5,
  numFailedTests: 1,
  numPendingTests: 0,
  testResults: [
    { name: "/repo/test/a.test.ts", startTime: 1_000, endTime: 3_500, assertionResults: [{}, {}] },
    { name: "/repo/test/b/c.test.ts", startTime: 1_100, endTime: 13_100, assertionResults: [{}] },
    { name: "/repo/test/d.test.ts", startTime: 4_000, endTime: 6_500, assertionResults: [{}, {}, {}] },
  ],
};

describe("bench tests: the suites' durations from a vitest JSON report", () => {
  it("one row per file, relative to the root, slowest first, equal times by name", () => {
    expect(suiteTimes(report, "/repo")).toEqual([
      { file: "test/b/c.test.ts", ms: 12_000, tests: 1 },
      { file: "test/a.test.ts", ms: 2_500, tests: 2 },
      { file: "test/d.test.ts", ms: 2_500, tests: 3 },
    ]);
  });

  it("prints seconds, the sum of the files (17.0 s, 6 tests) and the wall time when measured", () => {
    const lines = formatSuiteTimes(suiteTimes(report, "/repo"), 9_250);
    expect(lines[0]).toMatch(/^test\/b\/c\.test\.ts\s+12\.0 s\s+1 tests$/);
    expect(lines[3]).toMatch(/^sum of files\s+17\.0 s\s+6 tests in 3 files$/);
    expect(lines[4]).toMatch(/^wall\s+9\.3 s$/);
    expect(formatSuiteTimes([], null)).toEqual([expect.stringMatching(/^sum of files\s+0\.0 s\s+0 tests in 0 files$/)]);
  });
});
