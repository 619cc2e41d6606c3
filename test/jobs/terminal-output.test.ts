// What a person and a machine read (issue 13, item 10): on a pseudo-terminal (`script`), pino-pretty
// lines and a progress bar for the stages; through a pipe, JSON lines only. Also the log-once-per-
// outage rule for Redis errors and the bounded shutdown steps.
import { spawnSync } from "node:child_process";
import { EventEmitter } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { logErrorsOncePerOutage } from "../../jobs/host/redis-health.ts";
import { logFormat } from "../../jobs/log-format.ts";
import { closeAll } from "../../jobs/shutdown.ts";
import { writeTinySource } from "../fixtures/tiny-source.ts";
import { ROOT, TSX } from "./process.ts";

const hasScript = spawnSync("script", ["--version"]).status === 0;
// eslint-disable-next-line no-control-regex
// Terminal text as lines: each redraw of the bar (cursor to column 1) starts a line.
const plain = (s: string) =>
  s
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the terminal sequences this strips
    .replace(/\x1b\[1G/g, "\n")
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the terminal sequences this strips
    .replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]/g, "")
    .replace(/\r/g, "\n");

function cliRun(tty: boolean): string {
  const env = {
    ...process.env,
    DATA_DIR: mkdtempSync(join(tmpdir(), "tty-")),
    LOG_LEVEL: "debug",
    LOG_FORMAT: "",
    REDIS_URL: "",
    SOURCE_DIR: "",
  };
  const cmd = [TSX, "jobs/cli/pipeline.ts", "run", "--source", writeTinySource()];
  // script(1) gives the child a pseudo-terminal for stdin, stdout and stderr, and copies it out.
  const r = tty
    ? spawnSync("script", ["-q", "-e", "-c", cmd.map((a) => `'${a}'`).join(" "), "/dev/null"], {
        cwd: ROOT,
        env,
        encoding: "utf8",
        timeout: 120_000,
      })
    : spawnSync(cmd[0], cmd.slice(1), { cwd: ROOT, env, encoding: "utf8", timeout: 120_000 });
  expect(r.status, r.stderr).toBe(0);
  return tty ? r.stdout : `${r.stdout}\n--stderr--\n${r.stderr}`;
}

describe("log format", () => {
  it("is pretty on a terminal unless LOG_FORMAT says otherwise, JSON elsewhere", () => {
    expect(logFormat({}, true)).toBe("pretty");
    expect(logFormat({}, false)).toBe("json");
    expect(logFormat({ LOG_FORMAT: "json" }, true)).toBe("json");
    expect(logFormat({ LOG_FORMAT: "pretty" }, false)).toBe("pretty");
  });

  it("through a pipe: every log line is one JSON object, and no progress bar is drawn", () => {
    const out = cliRun(false);
    const [stdout, stderr] = out.split("\n--stderr--\n");
    const lines = stdout.split("\n").filter(Boolean);
    const logs = lines.filter((l) => !l.startsWith("published snapshot "));
    expect(lines.filter((l) => /^published snapshot \S+ from \S+ in \d+ ms$/.test(l))).toHaveLength(1);
    expect(logs.map((l) => JSON.parse(l).msg)).toEqual(
      expect.arrayContaining(["source ingested", "portfolios backtested", "analytics computed", "snapshot published"]),
    );
    for (const l of logs)
      expect(JSON.parse(l)).toEqual(
        expect.objectContaining({ level: expect.any(Number), time: expect.any(Number), msg: expect.any(String) }),
      );
    expect(stderr).toBe("");
  });

  it.skipIf(!hasScript)(
    "on a pseudo-terminal: readable lines and a bar naming each stage",
    () => {
      const out = plain(cliRun(true));
      expect(out).not.toContain('{"level"');
      expect(out).toMatch(
        new RegExp(
          String.raw`^\[\d\d:\d\d:\d\d\] INFO: source ingested ` +
            String.raw`\{"rows":\{"companies":4,"prices":120,"ratings":8,"benchmarks":30\}`,
          "m",
        ),
      );
      expect(out).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: snapshot published /m);
      // a bar with a percentage, or for a step without a count a spinner (never a bar frozen at 0 %)
      for (const stage of [
        "ingest: reading and validating the source",
        "ingest: prices",
        "ingest: fundamentals",
        "portfolios",
        "analytics",
      ])
        expect(out).toMatch(new RegExp(`^ ${stage} (\\[[░█]+\\] \\d+% \\||[|/\\\\-]) \\d+s`, "m"));
      expect(out).toMatch(/^ ingest: reading and validating the source [|/\\-] \d+s/m);
      expect(out).not.toMatch(/^ ingest: reading and validating the source \[/m);
      expect(out).toMatch(/^published snapshot \S+ from \S+ in \d+ ms$/m);
    },
    120_000,
  );
});

describe("Redis errors during an outage", () => {
  it("one line when it starts, reminders at most once per interval, one line when it ends", async () => {
    const lines: string[] = [];
    const log = {
      info: (_o: object | string, m?: string) => lines.push(`info ${m}`),
      warn: (_o: object | string, m?: string) => lines.push(`warn ${m}`),
    };
    const e = new EventEmitter();
    logErrorsOncePerOutage(e, log, "limiter", { everyMs: 200 });
    for (let i = 0; i < 50; i++) e.emit("error", new Error("connect ECONNREFUSED"));
    expect(lines).toEqual(["warn limiter: Redis unreachable; retrying quietly"]);
    await new Promise((r) => setTimeout(r, 250));
    e.emit("error", new Error("connect ECONNREFUSED"));
    e.emit("error", new Error("connect ECONNREFUSED"));
    e.emit("ready");
    e.emit("ready");
    expect(lines).toEqual([
      "warn limiter: Redis unreachable; retrying quietly",
      "warn limiter: Redis still unreachable",
      "info limiter: Redis reachable again",
    ]);
  });

  it("stays quiet when the start-up line already reported the outage", () => {
    const lines: string[] = [];
    const e = new EventEmitter();
    logErrorsOncePerOutage(e, { info: () => lines.push("info"), warn: () => lines.push("warn") }, "worker", {
      alreadyReported: true,
    });
    for (let i = 0; i < 10; i++) e.emit("error", new Error("x"));
    expect(lines).toEqual([]);
  });
});

describe("shutdown steps", () => {
  it("run in order; a step that hangs or throws does not stop the later ones", async () => {
    const done: string[] = [];
    const warned: string[] = [];
    const log = { info: () => undefined, warn: (o: object | string) => warned.push(JSON.stringify(o)) };
    const t0 = Date.now();
    await closeAll(
      [
        { name: "http", close: async () => void done.push("http") },
        { name: "hangs", close: () => new Promise(() => undefined) },
        { name: "throws", close: () => Promise.reject(new Error("boom")) },
        { name: "catalog", close: () => void done.push("catalog") },
      ],
      log,
      100,
    );
    expect(done).toEqual(["http", "catalog"]);
    expect(warned).toEqual([
      JSON.stringify({ step: "hangs", ms: 100 }),
      JSON.stringify({ step: "throws", err: "boom" }),
    ]);
    expect(Date.now() - t0).toBeLessThan(1_000);
  });
});
