// Transport rules of /graphiql that need their own server: the per-key rate limit shared with
// REST (429 with a GraphQL errors body), 503 before any snapshot, and the request body bound.
import { afterEach, expect, it } from "vitest";
import { gql } from "./graphql-helpers.ts";
import { startTestServer, type TestServer } from "./helpers.ts";

let s: TestServer | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

it("GraphQL and REST count against one per-key limit; over it: 429 with Retry-After and errors", async () => {
  s = await startTestServer({ rateLimit: { points: 3, durationSec: 60 } });
  expect((await s.api("benchmarks")).status).toBe(200);
  expect((await gql(s, `{ benchmarks { id } }`)).status).toBe(200);
  expect((await gql(s, `{ benchmarks { id } }`)).status).toBe(200);
  const over = await gql(s, `{ benchmarks { id } }`);
  expect(over.status).toBe(429);
  expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(over.json).toEqual({
    errors: [{ message: expect.stringMatching(/rate limit/), extensions: { code: "RATE_LIMITED" } }],
  });
  expect((await s.api("benchmarks")).status).toBe(429);
});

it("before the first snapshot: 503 with errors (after the key check)", async () => {
  s = await startTestServer({ snapshot: "none" });
  expect((await gql(s, `{ benchmarks { id } }`, undefined, { key: null })).status).toBe(401);
  const r = await gql(s, `{ benchmarks { id } }`);
  expect(r.status).toBe(503);
  expect(r.json.errors[0].extensions.code).toBe("UNAVAILABLE");
});

it("a request body over 256 KiB is refused with 413 and nothing runs", async () => {
  s = await startTestServer();
  const r = await gql(s, `{ benchmarks { id } }`, { pad: "x".repeat(300 * 1024) });
  expect(r.status).toBe(413);
  expect(r.json.errors[0].extensions.code).toBe("PAYLOAD_TOO_LARGE");
});

it("/graphiql with a trailing slash is the same endpoint; /graphiqlx and /graphiql/other are not", async () => {
  s = await startTestServer();
  const post = (path: string) =>
    fetch(`${s!.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", api_key: "srk_alice_full_key_0123456789abcdef" },
      body: JSON.stringify({ query: "{ benchmarks { id } }" }),
    });
  const slash = await post("/graphiql/");
  expect(slash.status).toBe(200);
  expect((await slash.json()).data).toEqual({ benchmarks: [{ id: "1" }] });
  expect((await post("/graphiqlx")).status).toBe(404);
  expect((await post("/graphiql/other")).status).toBe(404);
});
