// POST/GET helpers for /graphiql against a test server.
import { KEYS } from "./fixture.ts";
import { type Res, readRes, type TestServer } from "./helpers.ts";

export type GqlRes = Res;

export async function gql(
  s: TestServer,
  query: string,
  variables?: object,
  opts: { key?: string | null; operationName?: string; headers?: Record<string, string> } = {},
): Promise<GqlRes> {
  const key = opts.key === undefined ? KEYS.alice : opts.key;
  const r = await fetch(`${s.url}/graphiql`, {
    method: "POST",
    // the GraphQL-over-HTTP media type: request errors answer 400 (application/json would get 200)
    headers: {
      "content-type": "application/json",
      accept: "application/graphql-response+json",
      ...(key ? { api_key: key } : {}),
      ...opts.headers,
    },
    body: JSON.stringify({ query, variables, operationName: opts.operationName }),
  });
  return readRes(r);
}

export async function gqlGet(
  s: TestServer,
  params: Record<string, string>,
  headers: Record<string, string> = { api_key: KEYS.alice, accept: "application/json" },
): Promise<GqlRes> {
  const u = new URL(`${s.url}/graphiql`);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return readRes(await fetch(u, { headers }));
}
