// The access line (info for a 2xx) carries the user agent cut to its first 40 characters.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYS } from "./fixture.ts";
import { startTestServer, type TestServer } from "./helpers.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

describe("access log", () => {
  it("logs a browser's user agent cut to 40 characters", async () => {
    const ua = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
    s.logs.length = 0;
    const r = await s.api("benchmarks", { api_key: KEYS.alice }, { "user-agent": ua });
    expect(r.status).toBe(200);
    await new Promise((res) => setTimeout(res, 20)); // lines are written at the end of the turn
    const line = JSON.parse(s.logs.find((l) => l.includes("request completed"))!);
    expect(line.level).toBe(30); // info
    expect(line.req.userAgent).toBe("Mozilla/5.0 (X11; Linux x86_64) AppleWeb");
    expect(line.req.userAgent).toHaveLength(40);
  });
});
