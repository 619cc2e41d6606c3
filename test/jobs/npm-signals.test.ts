// `npm start` / `npm run pipeline -- …` stopped by a signal sent to npm (a service manager, `timeout`,
// `kill`): npm forwards SIGTERM and SIGINT to the shell running the script, so the script must
// `exec` its node process (dash keeps a child of `sh -c` otherwise, and dies leaving node running).
// The scripts run here are package.json's own, with the entry replaced by a tiny child.
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "./process.ts";

const scripts = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts as Record<string, string>;
const dir = mkdtempSync(join(tmpdir(), "npm-signals-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// No sources next to this copy of the launcher: its freshness check does nothing.
mkdirSync(join(dir, "scripts"));
copyFileSync(join(ROOT, "scripts/dist-fresh.mjs"), join(dir, "scripts/dist-fresh.mjs"));
writeFileSync(
  join(dir, "child.mjs"),
  `for (const s of ["SIGTERM", "SIGINT", "SIGHUP"])
  process.on(s, () => { console.log("child got " + s); process.exit(7); });
console.log("child " + process.pid + " ready");
setInterval(() => {}, 1000);
`,
);
writeFileSync(
  join(dir, "package.json"),
  JSON.stringify({
    name: "npm-signals",
    version: "0.0.0",
    type: "module",
    scripts: {
      prestart: scripts.prestart,
      start: scripts.start!.replace("dist/jobs/host/start.js", "child.mjs"),
      pipeline: scripts.pipeline!.replace("dist/jobs/cli/pipeline.js", "child.mjs"),
    },
  }),
);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function stopNpm(script: string, signal: NodeJS.Signals) {
  const npm = spawn("npm", ["run", "--silent", script], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  npm.stdout!.on("data", (b) => (out += b));
  npm.stderr!.on("data", (b) => (out += b));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    npm.on("exit", (code, sig) => res({ code, signal: sig })),
  );
  const deadline = Date.now() + 20_000;
  while (!/child (\d+) ready/.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const childPid = Number(/child (\d+) ready/.exec(out)?.[1]);
  expect(childPid, out).toBeGreaterThan(0);
  npm.kill(signal);
  const exit = await Promise.race([exited, new Promise((r) => setTimeout(() => r("npm still running"), 10_000))]);
  // Give an orphan a moment to show it survived.
  await new Promise((r) => setTimeout(r, 300));
  const childAlive = alive(childPid);
  if (childAlive) process.kill(childPid, "SIGKILL");
  return { out, exit, childAlive };
}

describe("a signal to npm reaches the node process", () => {
  for (const script of ["start", "pipeline"])
    for (const signal of ["SIGTERM", "SIGINT"] as const)
      it(`npm run ${script}: ${signal}`, async () => {
        const { out, exit, childAlive } = await stopNpm(script, signal);
        expect(out).toContain(`child got ${signal}`);
        expect(childAlive).toBe(false);
        // npm passes on the child's exit code.
        expect(exit).toEqual({ code: 7, signal: null });
      }, 30_000);
});
