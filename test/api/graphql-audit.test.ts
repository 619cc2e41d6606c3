// graphql-http's own GraphQL-over-HTTP audit suite against the real server: every MUST audit
// passes. The audits send no key; the fetch function adds the header api_key, as any client must.
import { serverAudits } from "graphql-http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYS } from "./fixture.ts";
import { startTestServer, type TestServer } from "./helpers.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const withKey: typeof fetch = (input, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set("api_key", KEYS.alice);
  return fetch(input, { ...init, headers });
};

describe("graphql-http server audits", () => {
  const audits = serverAudits({ url: () => `${s.url}/graphiql`, fetchFn: withKey });
  it("has MUST audits to run", () => {
    // graphql-http 1.23 has 13
    expect(audits.filter((a) => a.name.startsWith("MUST")).length).toBeGreaterThanOrEqual(13);
  });
  for (const audit of audits) {
    it(audit.name, async () => {
      const r = await audit.fn();
      if (r.status !== "ok") {
        const detail = "response" in r ? `${r.response.status} ${await r.response.text().catch(() => "")}` : "";
        expect.fail(`${r.reason} ${detail}`.slice(0, 500));
      }
    });
  }
});
