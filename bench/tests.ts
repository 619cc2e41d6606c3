// `npm run bench -- tests`: each test file's duration, slowest first, so the next slow file is seen
// when it lands. It runs `npm test` (the fast project) with vitest's JSON reporter and
// bench/file-times-reporter.ts; `--project=integration` or `--project=all` runs another side, and
// `--report=FILE` reads a JSON report already written (CI's, or `vitest run --reporter=json
// --outputFile=FILE`). The JSON report times a file's tests only (first test's start to last's end);
// the "whole" column adds the file's import and hooks (a slow beforeAll shows there): measured by
// bench/file-times-reporter.ts in our own run, or read from file-times.json beside a given report.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import type { FileTime } from "./file-times-reporter.ts";

const ROOT = resolve(import.meta.dirname, "..");

/** The parts of vitest's JSON report read here. */
export interface VitestReport {
  startTime: number;
  numTotalTests: number;
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  testResults: { name: string; startTime: number; endTime: number; assertionResults: unknown[] }[];
}

export interface SuiteTime {
  file: string;
  /** The JSON report's span of the file's tests. */
  ms: number;
  tests: number;
  /** Import, hooks and tests (bench/file-times-reporter.ts), when measured. */
  wholeMs: number | null;
}

const rel = (root: string, file: string) => relative(root, file).split("\\").join("/");

/** One row per test file, slowest first (by the whole time when there is one; ties by name). */
export function suiteTimes(report: VitestReport, root = ROOT, whole: FileTime[] = []): SuiteTime[] {
  const wholeOf = new Map(whole.map((w) => [rel(root, w.file), w.ms]));
  const key = (r: SuiteTime) => r.wholeMs ?? r.ms;
  return report.testResults
    .map((r) => {
      const file = rel(root, r.name);
      return {
        file,
        ms: Math.max(0, r.endTime - r.startTime),
        tests: r.assertionResults.length,
        wholeMs: wholeOf.get(file) ?? null,
      };
    })
    .sort((a, b) => key(b) - key(a) || (a.file < b.file ? -1 : 1));
}

/** The table printed: whole time (or "-"), tests' span, test count; then the sums and the wall time. */
export function formatSuiteTimes(rows: SuiteTime[], wallMs: number | null): string[] {
  const width = Math.max(12, ...rows.map((r) => r.file.length));
  const sec = (ms: number | null) => (ms === null ? "-" : (ms / 1000).toFixed(1)).padStart(7);
  const line = (name: string, whole: number | null, tests: number | null, n: string) =>
    `${name.padEnd(width)} ${sec(whole)} ${sec(tests)} ${n}`;
  const lines = [`${"file".padEnd(width)} ${"whole s".padStart(7)} ${"tests s".padStart(7)} tests`];
  for (const r of rows) lines.push(line(r.file, r.wholeMs, r.ms, String(r.tests).padStart(5)));
  const sum = (f: (r: SuiteTime) => number) => rows.reduce((s, r) => s + f(r), 0);
  const whole = rows.some((r) => r.wholeMs !== null) ? sum((r) => r.wholeMs ?? 0) : null;
  lines.push(
    line(
      "sum of files",
      whole,
      sum((r) => r.ms),
      `${String(sum((r) => r.tests)).padStart(5)} in ${rows.length} files`,
    ),
  );
  if (wallMs !== null) lines.push(line("wall", wallMs, null, ""));
  return lines;
}

const option = (name: string) =>
  process.argv
    .slice(2)
    .find((a) => a.startsWith(`--${name}=`))
    ?.slice(name.length + 3);

/** Runs the side asked for with both reporters; answers where they wrote and the wall time. */
function runVitest(project: string): { file: string; times: string; wallMs: number } {
  const dir = mkdtempSync(join(tmpdir(), "bench-tests-"));
  const [file, times] = [join(dir, "report.json"), join(dir, "file-times.json")];
  const which = project === "all" ? [] : ["--project", project];
  const reporters = [
    "--reporter=json",
    `--outputFile=${file}`,
    `--reporter=${join(ROOT, "bench/file-times-reporter.ts")}`,
  ];
  const t0 = performance.now();
  try {
    execFileSync(process.execPath, [join(ROOT, "node_modules/vitest/vitest.mjs"), "run", ...which, ...reporters], {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, BENCH_FILE_TIMES: times },
    });
  } catch {
    // a failing test still writes the reports: the times are printed with the failure count
  }
  return { file, times, wallMs: performance.now() - t0 };
}

export async function benchTests(): Promise<void> {
  const given = option("report");
  const project = option("project") ?? "fast";
  console.log(`\n## tests (${given ? `report ${given}` : `vitest --project ${project}`})`);
  const load = loadavg().map((l) => l.toFixed(2));
  console.log(`${cpus().length} cores, load average before: ${load.join(" ")}`);
  // a report given may have the reporter's whole times beside it (BENCH_FILE_TIMES=DIR/file-times.json)
  const run = given
    ? { file: given, times: join(dirname(given), "file-times.json"), wallMs: null }
    : runVitest(project);
  const report = JSON.parse(readFileSync(run.file, "utf8")) as VitestReport;
  const whole = run.times && existsSync(run.times) ? (JSON.parse(readFileSync(run.times, "utf8")) as FileTime[]) : [];
  for (const line of formatSuiteTimes(suiteTimes(report, ROOT, whole), run.wallMs)) console.log(line);
  const { numPassedTests: p, numFailedTests: f, numPendingTests: s } = report;
  console.log(`${p} passed, ${f} failed, ${s} skipped; load average after: ${loadavg()[0].toFixed(2)}`);
}
