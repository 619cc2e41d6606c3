// A vitest reporter for `npm run bench -- tests`: vitest's JSON report times a file's tests only
// (from its first test's start to its last's end), so a slow beforeAll or a heavy import would not
// show. This one writes, per file, the whole time its worker spent on it: importing the file and
// what it imports, then its hooks and tests. The file is BENCH_FILE_TIMES.
import { writeFileSync } from "node:fs";
import type { Reporter, TestModule } from "vitest/node";

/** One file's whole time, ms: import (collect) plus setup files plus hooks and tests. */
export interface FileTime {
  file: string;
  project: string;
  ms: number;
  importMs: number;
}

export default class FileTimesReporter implements Reporter {
  private readonly times: FileTime[] = [];

  onTestModuleEnd(m: TestModule): void {
    const d = m.diagnostic();
    const ms = d.prepareDuration + d.collectDuration + d.setupDuration + d.duration;
    this.times.push({ file: m.moduleId, project: m.project.name, ms, importMs: d.collectDuration });
  }

  onTestRunEnd(): void {
    const out = process.env.BENCH_FILE_TIMES;
    if (out) writeFileSync(out, JSON.stringify(this.times));
  }
}
