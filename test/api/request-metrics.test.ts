// Request metrics kept as plain numbers and rendered by prom-client at scrape time.
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { RequestMetrics } from "../../api/request-metrics.ts";

describe("RequestMetrics", () => {
  it("renders counts per status and cumulative latency buckets in the Prometheus text format", async () => {
    const m = new RequestMetrics();
    const registry = new Registry();
    m.register(registry);
    m.record("stock_ratings", "GET", 200, 0.0004); // ≤ 0.0005
    m.record("stock_ratings", "GET", 200, 0.003); // ≤ 0.005
    m.record("stock_ratings", "GET", 404, 0.0005); // on a bound: counts in it (le is ≤)
    m.record("stock_ratings", "GET", 200, 7); // above every bound: +Inf only
    const text = await registry.metrics();
    const line = (name: string) =>
      text
        .split("\n")
        .find((l) => l.startsWith(name))
        ?.split(" ")[1];
    expect(line('http_requests_total{route="stock_ratings",method="GET",status="200"}')).toBe("3");
    expect(line('http_requests_total{route="stock_ratings",method="GET",status="404"}')).toBe("1");
    const bucket = (le: string) =>
      line(`http_request_duration_seconds_bucket{le="${le}",route="stock_ratings",method="GET"}`);
    expect([
      bucket("0.0005"),
      bucket("0.001"),
      bucket("0.0025"),
      bucket("0.005"),
      bucket("2.5"),
      bucket("+Inf"),
    ]).toEqual(["2", "2", "2", "3", "3", "4"]);
    expect(Number(line('http_request_duration_seconds_sum{route="stock_ratings",method="GET"}'))).toBeCloseTo(
      7.0039,
      10,
    );
    expect(line('http_request_duration_seconds_count{route="stock_ratings",method="GET"}')).toBe("4");
    expect(text).toContain("# TYPE http_request_duration_seconds histogram");
    expect(text).toContain("# TYPE http_requests_total counter");
  });
});
