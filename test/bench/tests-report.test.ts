// `npm run bench -- tests` (bench/tests.ts) reads vitest's JSON report: each file's tests' span is
// its end minus its start, and the whole time (bench/file-times-reporter.ts), when there is one,
// orders the rows. The report here is hand-made (three files, times chosen so that the two orders
// differ from the report's), the sums done by hand.
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
  it("one row per file, relative to the root, slowest tests first, equal times by name", () => {
    expect(suiteTimes(report, "/repo")).toEqual([
      { file: "test/b/c.test.ts", ms: 12_000, tests: 1, wholeMs: null },
      { file: "test/a.test.ts", ms: 2_500, tests: 2, wholeMs: null },
      { file: "test/d.test.ts", ms: 2_500, tests: 3, wholeMs: null },
    ]);
  });

  it("with the whole times, they order the rows: a slow beforeAll puts d first", () => {
    const whole = [
      { file: "/repo/test/a.test.ts", project: "fast", ms: 3_000, importMs: 400 },
      { file: "/repo/test/b/c.test.ts", project: "fast", ms: 12_600, importMs: 500 },
      { file: "/repo/test/d.test.ts", project: "fast", ms: 20_000, importMs: 300 },
    ];
    expect(suiteTimes(report, "/repo", whole).map((r) => [r.file, r.wholeMs])).toEqual([
      ["test/d.test.ts", 20_000],
      ["test/b/c.test.ts", 12_600],
      ["test/a.test.ts", 3_000],
    ]);
    // sums: whole 3.0 + 12.6 + 20.0 = 35.6 s; tests 2.5 + 12.0 + 2.5 = 17.0 s; 2 + 1 + 3 = 6 tests
    const lines = formatSuiteTimes(suiteTimes(report, "/repo", whole), 9_250);
    expect(lines[1]).toMatch(/^test\/d\.test\.ts\s+20\.0\s+2\.5\s+3$/);
    expect(lines[4]).toMatch(/^sum of files\s+35\.6\s+17\.0\s+6 in 3 files$/);
    expect(lines[5]).toMatch(/^wall\s+9\.3\s+-\s*$/);
  });

  it("without whole times the column says - and the sums still add the tests' spans", () => {
    const lines = formatSuiteTimes(suiteTimes(report, "/repo"), null);
    expect(lines[0]).toMatch(/^file\s+whole s\s+tests s tests$/);
    expect(lines[1]).toMatch(/^test\/b\/c\.test\.ts\s+-\s+12\.0\s+1$/);
    expect(lines.at(-1)).toMatch(/^sum of files\s+-\s+17\.0\s+6 in 3 files$/);
    expect(formatSuiteTimes([], null)).toEqual([
      expect.stringMatching(/^file\s+whole s/),
      expect.stringMatching(/^sum of files\s+-\s+0\.0\s+0 in 0 files$/),
    ]);
  });
});
