// The admission gate (api/gate.ts) alone, framework-free: one order for every transport — the
// failed-auth throttle, the key, the rate limit, the scopes — answered as the caller or the refusal.
import { describe, expect, it } from "vitest";
import type { AuthGuard } from "../../api/auth-failures.ts";
import { type ApiError, RateLimited } from "../../api/errors.ts";
import { admit, type GateEnv, knownCaller } from "../../api/gate.ts";
import type { Limiter, RateHeaders } from "../../api/rate-limit.ts";
import type { CatalogReader } from "../../pipeline/store/catalog/types.ts";

const user = { id: "u1", email: "a@b.c", firstName: "A", lastName: "B", phoneNumber: "" };
const key = { id: "k1", userId: "u1", scopes: ["ratings:read" as const], createdAt: "", revokedAt: null };
const looked: string[] = [];
const catalog = {
  authenticate: (k: string) => {
    looked.push(k);
    return k === "good-key" ? { user, key } : null;
  },
} as unknown as CatalogReader;
const RATE: RateHeaders = { "X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "9", "X-RateLimit-Reset": "60" };

/** A throttle that blocks `blocked` and refuses the second failure of an address with 429. */
function guard(blocked: string): AuthGuard & { failures: string[] } {
  const failures: string[] = [];
  return {
    failures,
    check(address) {
      if (address === blocked) throw new RateLimited(30);
    },
    async fail(address, failure) {
      failures.push(String(address));
      throw failures.filter((a) => a === address).length > 1 ? new RateLimited(60) : failure;
    },
  };
}

const env = (over: Partial<GateEnv> = {}): GateEnv => ({ catalog, limiter: null, authGuard: null, ...over });
const status = (a: Awaited<ReturnType<typeof admit>>) => (a.refusal as ApiError | undefined)?.status ?? 200;

describe("admit", () => {
  it("answers the caller of a known key, with the rate limit's headers", async () => {
    const limiter: Limiter = async (id) => (id === "k1" ? RATE : undefined);
    const a = await admit(env({ limiter }), { key: "good-key", address: "10.0.0.1" });
    expect(a.refusal).toBeUndefined();
    expect(a.refusal ? null : a.caller.key.id).toBe("k1");
    expect(a.rate).toEqual(RATE);
  });

  it("refuses a missing or unknown key with 401; unknown keys count per address, the second is 429", async () => {
    expect(status(await admit(env(), { key: undefined, address: "10.0.0.1" }))).toBe(401);
    const g = guard("none");
    expect(status(await admit(env({ authGuard: g }), { key: "bad", address: "10.0.0.2" }))).toBe(401);
    expect(status(await admit(env({ authGuard: g }), { key: "bad", address: "10.0.0.2" }))).toBe(429);
    expect(g.failures).toEqual(["10.0.0.2", "10.0.0.2"]);
  });

  it("refuses a blocked address with 429 before its key is looked at, even the right one", async () => {
    looked.length = 0;
    const a = await admit(env({ authGuard: guard("10.0.0.3") }), { key: "good-key", address: "10.0.0.3" });
    expect(status(a)).toBe(429);
    expect(looked).toEqual([]);
  });

  it("refuses past the rate limit (429), then a key lacking a scope (403, with the rate headers)", async () => {
    const spent: Limiter = async () => {
      throw new RateLimited(5, RATE);
    };
    expect(status(await admit(env({ limiter: spent }), { key: "good-key", address: undefined }))).toBe(429);
    const limiter: Limiter = async () => RATE;
    const a = await admit(env({ limiter }), { key: "good-key", address: undefined, scopes: ["portfolios:read"] });
    expect(status(a)).toBe(403);
    expect(a.rate).toEqual(RATE);
    const ok = await admit(env({ limiter }), { key: "good-key", address: undefined, scopes: ["ratings:read"] });
    expect(status(ok)).toBe(200);
  });

  it("throws what is no refusal (a store failure is the server's, not the caller's)", async () => {
    const broken: Limiter = async () => {
      throw new Error("redis gone");
    };
    await expect(admit(env({ limiter: broken }), { key: "good-key", address: undefined })).rejects.toThrow(
      "redis gone",
    );
  });
});

describe("knownCaller (the fast path's synchronous check)", () => {
  it("is the caller of a known key from an address not blocked; null leaves the answer to the transport behind", () => {
    const g = guard("10.0.0.9");
    expect(knownCaller(env({ authGuard: g }), { key: "good-key", address: "10.0.0.1" })?.key.id).toBe("k1");
    expect(knownCaller(env({ authGuard: g }), { key: "good-key", address: "10.0.0.9" })).toBeNull();
    expect(knownCaller(env({ authGuard: g }), { key: "bad", address: "10.0.0.1" })).toBeNull();
    expect(knownCaller(env(), { key: undefined, address: undefined })).toBeNull();
    expect(g.failures).toEqual([]); // an unknown key is counted by the transport behind, once
  });
});
