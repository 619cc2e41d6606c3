// CLI mistakes as a user makes them (issue 13, item 7): one plain line naming the problem, then
// the usage, exit code 2, and no library text (ENOENT, DuckDB's SQL, a stack). A rejected source
// is reported whole in one run: row errors and unknown tickers together.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tinyFiles, writeTinySource } from "../fixtures/tiny-source.ts";
import { runScript } from "./process.ts";

const dataDir = mkdtempSync(join(tmpdir(), "cli-errors-"));
const pipeline = (...args: string[]) => runScript("jobs/cli/pipeline.ts", args, { DATA_DIR: dataDir });
const keys = (...args: string[]) => runScript("jobs/cli/keys-cli.ts", args, { DATA_DIR: dataDir });

function expectUsageError(r: ReturnType<typeof runScript>, firstLine: string | RegExp): void {
  expect(r.code, r.stderr).toBe(2);
  const [first, blank, usage] = r.stderr.split("\n");
  if (typeof firstLine === "string") expect(first).toBe(firstLine);
  else expect(first).toMatch(firstLine);
  expect(blank).toBe("");
  expect(usage).toMatch(/^usage: npm run (pipeline|keys) -- <command>$/);
  expect(r.stderr).not.toMatch(/ENOENT|scandir|Conversion Error|SELECT|^\s+at /im);
}

describe("npm run pipeline: usage errors", () => {
  it("a --source folder that does not exist", () => {
    expectUsageError(
      pipeline("run", "--source", "/nonexistent/source"),
      "--source /nonexistent/source: no such folder",
    );
  });

  it("backfill dates that are not calendar dates, or in the wrong order", () => {
    expectUsageError(
      pipeline("backfill", "--from", "2025-13-01", "--to", "2025-12-31"),
      '--from "2025-13-01" is not a calendar date YYYY-MM-DD',
    );
    expectUsageError(
      pipeline("backfill", "--from", "2025-01-01", "--to", "2025-02-29"),
      '--to "2025-02-29" is not a calendar date YYYY-MM-DD',
    );
    expectUsageError(
      pipeline("backfill", "--from", "2025-03-01", "--to", "2025-01-01"),
      "--from 2025-03-01 is after --to 2025-01-01",
    );
    expectUsageError(pipeline("backfill", "--to", "2025-01-01"), "backfill needs --from DATE (YYYY-MM-DD)");
  });

  it("unknown options, stray arguments and unknown commands", () => {
    expectUsageError(pipeline("run", "--sorce", "x"), /^Unknown option '--sorce'/);
    expectUsageError(pipeline("run", "extra"), /^Unexpected argument 'extra'/);
    expectUsageError(pipeline("status", "--verbose"), /^Unknown option '--verbose'/);
    expectUsageError(pipeline("frobnicate"), 'unknown command "frobnicate"');
    expectUsageError(pipeline("rebalance"), "rebalance needs --portfolio ID");
    expectUsageError(keys("create", "--email", "a@b.c"), "create needs --email and --scopes");
    expectUsageError(
      keys("create", "--email", "a@b.c", "--scopes", "ratings:read", "--admin"),
      /^Unknown option '--admin'/,
    );
  });

  it("no command prints the usage and exits 0", () => {
    const r = pipeline();
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^usage: npm run pipeline -- <command>/);
  });
});

describe("npm run pipeline: an unreachable Redis", () => {
  it("run stops at once with one line instead of waiting on the connection", () => {
    const r = runScript("jobs/cli/pipeline.ts", ["run", "--source", writeTinySource()], {
      DATA_DIR: dataDir,
      REDIS_URL: "redis://127.0.0.1:1",
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "Redis at redis://127.0.0.1:1 is unreachable (connect ECONNREFUSED 127.0.0.1:1): start it, or unset " +
        "REDIS_URL to run in this process\n",
    );
  });
});

describe("npm run pipeline: a rejected source", () => {
  it("is reported in one round: row errors and unknown tickers together, exit 2, nothing published", () => {
    const f = tinyFiles();
    const prices = f["prices.csv"].split("\n");
    // prices[3] is the file's line 4 (the header is line 1): the line an editor shows.
    prices[3] = prices[3].replace(/,[\d.]+,1000,/, ",abc,1000,");
    const dir = writeTinySource(() => ({ "prices.csv": `${prices.join("\n")}\n2024-01-01,,,,5,1,ZZZ` }));
    const r = pipeline("run", "--source", dir);
    expect(r.code).toBe(2);
    expect(r.stderr.split("\n")).toEqual([
      `source ${dir} rejected: 2 problem(s); nothing was published.`,
      "  prices.csv:4 [close] not a number",
      "  prices [ticker] ticker ZZZ (1 rows) is not in companies",
      "",
    ]);
  });
});
