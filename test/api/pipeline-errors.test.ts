// Pipeline errors carry codes, not HTTP statuses: api/errors.ts's one table answers for them,
// over REST (toApiError) and GraphQL (mapError) alike.
import { GraphQLError } from "graphql";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { toApiError } from "../../api/errors.ts";
import { mapError } from "../../api/graphql/errors.ts";
import { SourceRejectedError } from "../../pipeline/sources/report.ts";
import { NotAnAppendError } from "../../pipeline/stages/append-backtests.ts";
import { PortfolioNotFoundError } from "../../pipeline/stages/rebalance.ts";
import { PublishLockError } from "../../pipeline/store/coordination/publish-lock.ts";
import { ManifestMovedError } from "../../pipeline/store/snapshot/snapshots.ts";

const body = (e: unknown) => toApiError(e).toBody().error;

describe("pipeline error codes", () => {
  it("are codes, with no HTTP status on the pipeline's side", () => {
    const e = new ManifestMovedError("a", "b");
    expect(e.code).toBe("manifest_moved");
    expect("status" in e).toBe(false);
    expect(new PortfolioNotFoundError("p1").code).toBe("portfolio_not_found");
    expect(new PublishLockError("held").code).toBe("publish_locked");
  });

  it("map to statuses in api/errors.ts", () => {
    expect(body(new PortfolioNotFoundError("p1"))).toEqual({
      status: 404,
      code: "not_found",
      message: "not found",
      details: [],
    });
    expect(body(new ManifestMovedError("a", "b"))).toMatchObject({ status: 409, code: "conflict" });
    const locked = toApiError(new PublishLockError("/data/locks held"));
    expect([locked.status, locked.code, locked.headers["Retry-After"]]).toEqual([503, "unavailable", "5"]);
    expect(locked.message).not.toContain("/data"); // the lock's path stays in the log
    // the service's own faults stay opaque
    expect(
      body(new SourceRejectedError([{ file: "prices.csv", row: 2, column: "close", reason: "not a number" }])),
    ).toEqual({ status: 500, code: "internal_error", message: "internal server error", details: [] });
    expect(body(new NotAnAppendError("prices.csv changed")).status).toBe(500);
  });

  it("map the same way in GraphQL responses", () => {
    const log = pino({ level: "silent" });
    const wrap = (e: Error) => mapError(new GraphQLError(e.message, { originalError: e, path: ["p"] }), log, "r1");
    expect(wrap(new PortfolioNotFoundError("p1")).extensions).toEqual({ code: "NOT_FOUND", status: 404 });
    expect(wrap(new ManifestMovedError(null, "b")).extensions).toEqual({ code: "CONFLICT", status: 409 });
    const locked = wrap(new PublishLockError("held"));
    expect([locked.message, locked.extensions.code]).toEqual(["internal server error", "INTERNAL_SERVER_ERROR"]);
  });
});
