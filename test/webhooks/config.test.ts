// The WEBHOOK_* settings: defaults (jobs/webhooks/settings.ts), values read, bad ones refused by name.
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../jobs/config.ts";
import { retryDelay } from "../../jobs/webhooks/settings.ts";

describe("webhook settings", () => {
  it("default to https only, public addresses, 10 s, 15 attempts over about a day", () => {
    const c = loadConfig({});
    expect(c.webhooksEnabled).toBe(true);
    expect(c.webhooks).toEqual({
      allowHttp: false,
      allowPrivate: false,
      timeoutMs: 10_000,
      attempts: 15,
      backoffMs: 10_000,
      backoffCapMs: 21_600_000,
      disableAfter: 3,
      concurrency: 64,
      perWebhook: 4,
    });
    // the retries' full delays (before jitter): 10 s × 2^0 … 2^11 = 40,950 s, then 2 × 6 h capped
    const full = [...Array(14)].reduce((sum: number, _, i) => sum + retryDelay(i + 1, c.webhooks, () => 1), 0);
    expect(full).toBe(40_950_000 + 2 * 21_600_000);
    expect(full / 3600_000).toBeCloseTo(23.4, 1);
    // jitter keeps half to all of each delay
    expect(retryDelay(3, c.webhooks, () => 0)).toBe(20_000);
  });

  it("reads each variable", () => {
    const c = loadConfig({
      WEBHOOKS: "0",
      WEBHOOK_ALLOW_HTTP: "1",
      WEBHOOK_ALLOW_PRIVATE: "1",
      WEBHOOK_TIMEOUT_MS: "2500",
      WEBHOOK_ATTEMPTS: "4",
      WEBHOOK_BACKOFF_MS: "50",
      WEBHOOK_BACKOFF_CAP_MS: "400",
      WEBHOOK_DISABLE_AFTER: "1",
      WEBHOOK_CONCURRENCY: "8",
      WEBHOOK_PER_RECEIVER: "2",
    });
    expect(c.webhooksEnabled).toBe(false);
    expect(c.webhooks).toEqual({
      allowHttp: true,
      allowPrivate: true,
      timeoutMs: 2500,
      attempts: 4,
      backoffMs: 50,
      backoffCapMs: 400,
      disableAfter: 1,
      concurrency: 8,
      perWebhook: 2,
    });
  });

  it("refuses a bad value naming the variable", () => {
    for (const [k, v] of [
      ["WEBHOOK_ALLOW_PRIVATE", "yes"],
      ["WEBHOOK_ATTEMPTS", "0"],
      ["WEBHOOK_TIMEOUT_MS", "2.5"],
    ]) {
      const e = (() => {
        try {
          loadConfig({ [k]: v });
        } catch (err) {
          return err as ConfigError;
        }
        throw new Error(`accepted ${k}=${v}`);
      })();
      expect(e).toBeInstanceOf(ConfigError);
      expect(e.problems[0]).toContain(k);
    }
  });
});
