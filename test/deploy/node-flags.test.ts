// The server's node flags are declared once, in package.json's `start`; the image runs the server
// with the same ones (node directly, for its signals), and the benches read them from there.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { serverNodeFlags } from "../../bench/script.ts";

describe("the server's node flags", () => {
  it("are the same in package.json's start, the Dockerfile's CMD and the benches", () => {
    const cmd = readFileSync("Dockerfile", "utf8").match(/^CMD (\[.*\])$/m)?.[1];
    expect(cmd).toBeDefined();
    const argv = JSON.parse(cmd!) as string[];
    expect(argv[0]).toBe("node");
    expect(argv.at(-1)).toBe("dist/jobs/host/start.js");
    expect(argv.slice(1, -1)).toEqual(serverNodeFlags());
    // an old generation with room to spare over the young one (docs/operators/deployment.md, "Node flags")
    expect(serverNodeFlags()).toContain("--initial-old-space-size=128");
  });
});
