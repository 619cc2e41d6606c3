// WEB_CONCURRENCY > 1: node:cluster workers, each loading its own deps through makeDeps.
import { fork } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

describe("cluster mode", () => {
  it("serves from several worker processes on one port and closes cleanly", async () => {
    const child = fork(join(import.meta.dirname, "cluster-entry.ts"), [], {
      execArgv: ["--import", "tsx"],
      stdio: "pipe",
    });
    try {
      const { url } = await new Promise<{ url: string }>((resolve, reject) => {
        child.once("message", (m) => resolve(m as { url: string }));
        child.once("exit", (code) => reject(new Error(`exited ${code}`)));
      });
      const ids = new Set<string>();
      for (let i = 0; i < 40 && ids.size < 2; i++) {
        // a new connection each time, so the primary hands it to the next worker
        const r = await fetch(`${url}/healthz`, { headers: { connection: "close" } });
        expect(r.status).toBe(200);
        ids.add((await r.json()).snapshot);
      }
      expect(ids.size).toBe(2); // two processes, each with its own deps
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      child.send("close");
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill();
    }
  }, 60_000);
});
