// The /data/v1 dispatcher on a real Express app and server: Express's routing rules (literal
// segments case-sensitive, optional trailing slash, decoded parameters) without walking routes.
import http from "node:http";
import type { AddressInfo } from "node:net";
import express, { type ErrorRequestHandler } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toApiError } from "../../api/errors.ts";
import { restDispatcher } from "../../api/rest/dispatch.ts";

let base = "";
let server: http.Server;

beforeAll(async () => {
  const app = express();
  const echo = (name: string) => (req: express.Request, res: express.Response, path: Record<string, string>) => {
    res.json({ name, path, method: req.method });
  };
  app.use(
    restDispatcher([
      { path: "/things", handle: echo("list") },
      { path: "/things/:id", handle: echo("one") },
      { path: "/things/:id/parts/:part", handle: echo("part") },
      {
        path: "/async/:id",
        handle: async (_req, _res, path) => {
          await new Promise((r) => setTimeout(r, 1));
          throw new Error(`async failure ${path.id}`);
        },
      },
    ]),
  );
  app.use((_req, res) => void res.status(418).json({ fellThrough: true }));
  const onError: ErrorRequestHandler = (err, _req, res, _next) => {
    const e = toApiError(err);
    res.status(e.status).json({ ...e.toBody(), raw: String(err.message) });
  };
  app.use(onError);
  server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const get = async (path: string, method = "GET") => {
  const r = await fetch(base + path, { method });
  return { status: r.status, body: method === "HEAD" ? null : await r.json() };
};

describe("restDispatcher", () => {
  it.each([
    ["/data/v1/things", "list", {}],
    ["/data/v1/things/", "list", {}],
    ["/data/v1/things?x=1", "list", {}],
    ["/data/v1/things/?x=1/2", "list", {}],
    ["/data/v1/things/abc", "one", { id: "abc" }],
    ["/data/v1/things/abc/", "one", { id: "abc" }],
    ["/data/v1/things/BRK.B?x=1", "one", { id: "BRK.B" }],
    ["/data/v1/things/a%2Fb%20c", "one", { id: "a/b c" }],
    ["/data/v1/things/7/parts/x", "part", { id: "7", part: "x" }],
  ])("%s → %s %j", async (path, name, params) => {
    const r = await get(path);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ name, path: params, method: "GET" });
  });

  it("answers HEAD like GET, without a body", async () => {
    const r = await fetch(`${base}/data/v1/things/abc`, { method: "HEAD" });
    expect(r.status).toBe(200);
    expect(await r.text()).toBe("");
  });

  it.each([
    "/data/v1/THINGS",
    "/data/v1/nothing",
    "/data/v1/",
    "/data/v1/things//",
    "/data/v1/things/a/b",
    "/data/v1/things/7/parts",
    "/data/v1/things/7/PARTS/x",
  ])("%s is a 404 naming the endpoint", async (path) => {
    const r = await get(path);
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe("not_found");
    expect(r.body.error.message).toContain("no such endpoint");
  });

  it("leaves other paths and methods to the next handler", async () => {
    expect((await get("/elsewhere")).status).toBe(418);
    expect((await get("/data/v1")).status).toBe(418);
    expect((await get("/data/v1x/things")).status).toBe(418);
    expect((await get("/data/v1/nothing-here", "POST")).status).toBe(418);
  });

  it("a path it serves, asked with another method, is a 405 with Allow (issue #40)", async () => {
    const r = await get("/data/v1/things/7", "POST");
    expect([r.status, r.body.error?.code]).toEqual([405, "method_not_allowed"]); // Allow: request-rules.test.ts
  });

  it("a malformed percent-encoding is a 400 naming the parameter", async () => {
    const r = await get("/data/v1/things/7/parts/%E0%A4%A");
    expect(r.status).toBe(400);
    expect(r.body.error.details).toEqual([{ param: "part", message: "malformed percent-encoding in the path" }]);
  });

  it("passes an async handler's rejection to the error handler", async () => {
    const r = await get("/data/v1/async/9");
    expect(r.status).toBe(500);
    expect(r.body.raw).toBe("async failure 9");
  });
});
