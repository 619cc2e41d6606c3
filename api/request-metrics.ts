// Request count and latency per route, kept as plain numbers and handed to prom-client only when
// /metrics is scraped. prom-client's own Counter and Histogram hash the label set on every
// observation (even through a labels() child); on a cached read that cost as much as the read.
import type { MetricValue, MetricValueWithName, Registry } from "prom-client";

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

interface Series {
  route: string;
  method: string;
  /** Count per status code. */
  statuses: Map<number, number>;
  /** Non-cumulative bucket counts; the last slot is above the largest bound (+Inf). */
  buckets: Float64Array;
  sum: number;
  count: number;
}

export class RequestMetrics {
  private series = new Map<string, Series>();

  /** One finished request. */
  record(route: string, method: string, status: number, seconds: number): void {
    const k = `${route}|${method}`;
    let s = this.series.get(k);
    if (!s) {
      s = { route, method, statuses: new Map(), buckets: new Float64Array(BUCKETS.length + 1), sum: 0, count: 0 };
      this.series.set(k, s);
    }
    s.statuses.set(status, (s.statuses.get(status) ?? 0) + 1);
    let b = 0;
    while (b < BUCKETS.length && seconds > BUCKETS[b]) b++;
    s.buckets[b]++;
    s.sum += seconds;
    s.count++;
  }

  /** Adds http_requests_total and http_request_duration_seconds to a prom-client registry. */
  register(registry: Registry): void {
    const requests = () => {
      const values: MetricValue<string>[] = [];
      for (const s of this.series.values())
        for (const [status, n] of s.statuses)
          values.push({ labels: { route: s.route, method: s.method, status: String(status) }, value: n });
      return {
        name: "http_requests_total",
        help: "HTTP requests by route, method and status",
        type: "counter",
        aggregator: "sum",
        values,
      };
    };
    const latency = () => {
      const name = "http_request_duration_seconds";
      const values: MetricValueWithName<string>[] = [];
      for (const s of this.series.values()) {
        const labels = { route: s.route, method: s.method };
        let cumulative = 0;
        BUCKETS.forEach((le, b) => {
          cumulative += s.buckets[b];
          values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${name}_bucket` });
        });
        values.push({ labels: { le: "+Inf", ...labels }, value: s.count, metricName: `${name}_bucket` });
        values.push({ labels, value: s.sum, metricName: `${name}_sum` });
        values.push({ labels, value: s.count, metricName: `${name}_count` });
      }
      return { name, help: "HTTP request latency by route", type: "histogram", aggregator: "sum", values };
    };
    for (const [name, get] of [
      ["http_requests_total", requests],
      ["http_request_duration_seconds", latency],
    ] as const) {
      // A metric is anything with a name and get(); reset() keeps registry.resetMetrics() working.
      registry.registerMetric({ name, get, reset: () => this.series.clear() } as unknown as Parameters<
        Registry["registerMetric"]
      >[0]);
    }
  }
}
