// Real child processes for start-up and shutdown tests: the start script and the CLIs through tsx,
// their output collected, and a private redis-server on a free port (the shared one is not ours
// to make unreachable or to fill with a default-prefix queue).
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");
export const TSX = join(ROOT, "node_modules/.bin/tsx");
// Node itself with tsx's loader (not the tsx CLI, which runs Node as a second process): a kill
// then reaches the process under test, so a failed test cannot leave a server running.
const NODE_TSX = [process.execPath, "--import", "tsx"] as const;

export interface Proc {
  child: ChildProcess;
  /** stdout and stderr so far, interleaved. */
  output(): string;
  waitFor(pattern: RegExp, ms?: number): Promise<RegExpExecArray>;
  exited(ms?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function spawnScript(script: string, args: string[], env: Record<string, string>): Proc {
  const child = spawn(NODE_TSX[0], [...NODE_TSX.slice(1), script, ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_FORMAT: "", REDIS_URL: "", SOURCE_DIR: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (b) => (out += b));
  child.stderr!.on("data", (b) => (out += b));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    child.on("exit", (code, signal) => res({ code, signal })),
  );
  return {
    child,
    output: () => out,
    waitFor(pattern, ms = 120_000) {
      return new Promise((res, rej) => {
        const t = setTimeout(() => {
          clearInterval(i);
          rej(new Error(`no ${pattern} within ${ms} ms; output:\n${out}`));
        }, ms);
        const i = setInterval(() => {
          const m = pattern.exec(out);
          if (m) {
            clearTimeout(t);
            clearInterval(i);
            res(m);
          }
        }, 50);
      });
    },
    exited(ms = 60_000) {
      return Promise.race([
        exit,
        new Promise<never>((_, rej) =>
          setTimeout(() => rej(new Error(`still running after ${ms} ms; output:\n${out}`)), ms).unref(),
        ),
      ]);
    },
  };
}

/** Runs a script to its end; stdout and stderr apart. */
export function runScript(
  script: string,
  args: string[],
  env: Record<string, string> = {},
): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(NODE_TSX[0], [...NODE_TSX.slice(1), script, ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_FORMAT: "", REDIS_URL: "", SOURCE_DIR: "", ...env },
    encoding: "utf8",
    timeout: 40_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((res) => s.listen(0, "127.0.0.1", res));
  const { port } = s.address() as { port: number };
  await new Promise((res) => s.close(res));
  return port;
}

/** A private redis-server; stop() ends it. */
export async function startRedis(): Promise<{ url: string; stop: () => void }> {
  const port = await freePort();
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdio: "ignore" },
  );
  for (let i = 0; i < 100; i++) {
    if (spawnSync("redis-cli", ["-p", String(port), "ping"], { encoding: "utf8" }).stdout.trim() === "PONG") break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url: `redis://127.0.0.1:${port}`, stop: () => child.kill("SIGTERM") };
}
