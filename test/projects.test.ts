// The split of the suite (test/projects.ts) holds: a file on the fast side (`npm test`, the default
// for a new file) does not reach for another process or an outside service, and every entry of the
// integration list names a file or folder that exists. Read from the sources, so it runs in no time.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { FAST_WITH_A_CHILD, INTEGRATION } from "./projects.ts";

const ROOT = resolve(import.meta.dirname, "..");

const testFiles = () =>
  readdirSync(join(ROOT, "test"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => `test/${f.split("\\").join("/")}`)
    .sort();

const isIntegration = (file: string) => INTEGRATION.some((p) => (p.endsWith("/") ? file.startsWith(p) : file === p));

// What a test imports to start a process or reach a service; each names what it is.
const MARKERS: [RegExp, string][] = [
  [/from\s+"(node:)?child_process"/, "child processes"],
  [/from\s+"(ioredis|bullmq)"/, "Redis"],
  [/from\s+"pg"/, "PostgreSQL"],
  [/playwright-core|\/browser\.ts"/, "Chromium"],
  [/\/redis\.ts"|\b(OwnRedis|TEST_REDIS|cleanUpQueues)\b/, "Redis"],
  [/pg-fixture\.ts"/, "PostgreSQL"],
  [/receiver\.ts"/, "a webhook receiver"],
  [/\/process\.ts"|-entry\.ts"|\b(spawnTs|startWorker)\b/, "child processes"],
];

describe("the fast and integration projects", () => {
  it("a fast file starts no process and needs no outside service (else list it in test/projects.ts)", () => {
    const offenders = testFiles()
      // this file names the markers, it does not use them
      .filter((f) => !isIntegration(f) && !FAST_WITH_A_CHILD.includes(f) && f !== "test/projects.test.ts")
      .flatMap((f) => {
        const src = readFileSync(join(ROOT, f), "utf8");
        const uses = [...new Set(MARKERS.filter(([re]) => re.test(src)).map(([, what]) => what))];
        return uses.length ? [`${f}: ${uses.join(", ")}`] : [];
      });
    expect(offenders).toEqual([]);
  });

  it("every integration entry names a test file or a folder of them", () => {
    const files = testFiles();
    const stale = INTEGRATION.filter((p) =>
      p.endsWith("/") ? !files.some((f) => f.startsWith(p)) : !files.includes(p) || !existsSync(join(ROOT, p)),
    );
    expect(stale).toEqual([]);
  });

  it("the markers catch what they are for (a file of the integration list, read the same way)", () => {
    // reference: test/jobs/cli-errors.test.ts runs the CLIs as children, test/webhooks/rest.test.ts
    // delivers to a receiver, test/store/catalog/postgres.test.ts opens PostgreSQL catalogs
    const hits = (f: string) =>
      MARKERS.filter(([re]) => re.test(readFileSync(join(ROOT, f), "utf8"))).map(([, w]) => w);
    expect(hits("test/jobs/cli-errors.test.ts")).toContain("child processes");
    expect(hits("test/webhooks/rest.test.ts")).toContain("a webhook receiver");
    expect(hits("test/store/catalog/postgres.test.ts")).toContain("PostgreSQL");
  });
});
