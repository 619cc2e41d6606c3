// `npm run bench -- tests`: each test file's duration from vitest's JSON report, slowest first, so
// the next slow file is seen when it lands. It runs `npm test` (the fast project) with the JSON
// reporter; `--project=integration` or `--project=all` runs another side, and `--report=FILE`
// reads a report already written (CI's, or `vitest run --reporter=json --outputFile=FILE`).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";

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
  ms: number;
  tests: number;
}

/** One row per test file, slowest first (ties by name, so the order is stable). */
export function suiteTimes(report: VitestReport, root = ROOT): SuiteTime[] {
  return report.testResults
    .map((r) => ({
      file: relative(root, r.name).split("\\").join("/"),
      ms: Math.max(0, r.endTime - r.startTime),
      tests: r.assertionResults.length,
    }))
    .sort((a, b) => b.ms - a.ms || (a.file < b.file ? -1 : 1));
}

/** The table printed: the files, then their sum beside the run's wall time. */
export function formatSuiteTimes(rows: SuiteTime[], wallMs: number | null): string[] {
  const width = Math.max(4, ...rows.map((r) => r.file.length));
  const sec = (ms: number) => (ms / 1000).toFixed(1).padStart(7);
  const lines = rows.map((r) => `${r.file.padEnd(width)} ${sec(r.ms)} s ${String(r.tests).padStart(5)} tests`);
  const sum = rows.reduce((s, r) => s + r.ms, 0);
  const tests = rows.reduce((s, r) => s + r.tests, 0);
  lines.push(
    `${"sum of files".padEnd(width)} ${sec(sum)} s ${String(tests).padStart(5)} tests in ${rows.length} files`,
  );
  if (wallMs !== null) lines.push(`${"wall".padEnd(width)} ${sec(wallMs)} s`);
  return lines;
}

const option = (name: string) =>
  process.argv
    .slice(2)
    .find((a) => a.startsWith(`--${name}=`))
    ?.slice(name.length + 3);

/** Runs the side asked for with the JSON reporter; answers the report's path and the wall time. */
function runVitest(project: string): { file: string; wallMs: number } {
  const file = join(mkdtempSync(join(tmpdir(), "bench-tests-")), "report.json");
  const which = project === "all" ? [] : ["--project", project];
  const t0 = performance.now();
  try {
    execFileSync(
      process.execPath,
      [join(ROOT, "node_modules/vitest/vitest.mjs"), "run", ...which, "--reporter=json", `--outputFile=${file}`],
      { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] },
    );
  } catch {
    // a failing test still writes the report: its times are printed with the failure count
  }
  return { file, wallMs: performance.now() - t0 };
}

export async function benchTests(): Promise<void> {
  const given = option("report");
  const project = option("project") ?? "fast";
  console.log(`\n## tests (${given ? `report ${given}` : `vitest --project ${project}`})`);
  const load = loadavg().map((l) => l.toFixed(2));
  console.log(`${cpus().length} cores, load average before: ${load.join(" ")}`);
  const { file, wallMs } = given ? { file: given, wallMs: null } : runVitest(project);
  const report = JSON.parse(readFileSync(file, "utf8")) as VitestReport;
  for (const line of formatSuiteTimes(suiteTimes(report), wallMs)) console.log(line);
  const { numPassedTests: p, numFailedTests: f, numPendingTests: s } = report;
  console.log(`${p} passed, ${f} failed, ${s} skipped`);
}
