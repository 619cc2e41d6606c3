// Prometheus metrics (prom-client), one registry per app: request count and latency per route,
// snapshot age, body cache size. Route labels are the endpoint ids (bounded cardinality).
import type { RequestHandler } from "express";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Snapshot } from "../pipeline/store/model.ts";
import type { BodyCache } from "./output/lru.ts";

export function createMetrics(snapshot: () => Snapshot | null, cache: BodyCache) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: "http_requests_total",
    help: "HTTP requests by route, method and status",
    labelNames: ["route", "method", "status"] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: "http_request_duration_seconds",
    help: "HTTP request latency by route",
    labelNames: ["route", "method"] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  new Gauge({
    name: "snapshot_age_seconds",
    help: "Age of the served snapshot (seconds since it was created); -1 when none is served",
    registers: [registry],
    collect() {
      const s = snapshot();
      const t = s ? Date.parse(s.createdAt) : NaN;
      this.set(s && Number.isFinite(t) ? (Date.now() - t) / 1000 : -1);
    },
  });
  new Gauge({
    name: "api_body_cache_entries",
    help: "Serialized bodies held in the response cache",
    registers: [registry],
    collect() {
      this.set(cache.size);
    },
  });

  // Label children are looked up once per (route, method, status): prom-client otherwise hashes
  // the label object on every observation, on the hot path of every read.
  const counters = new Map<string, ReturnType<typeof requests.labels>>();
  const timers = new Map<string, ReturnType<typeof latency.labels>>();
  const middleware: RequestHandler = (req, res, next) => {
    const start = performance.now();
    res.once("finish", () => {
      const route = (res.locals.route as string | undefined) ?? (req.path === "/healthz" ? "healthz" : "other");
      const rk = `${route}|${req.method}`;
      const ck = `${rk}|${res.statusCode}`;
      let c = counters.get(ck);
      if (!c) counters.set(ck, (c = requests.labels(route, req.method, String(res.statusCode))));
      let t = timers.get(rk);
      if (!t) timers.set(rk, (t = latency.labels(route, req.method)));
      c.inc();
      t.observe((performance.now() - start) / 1000);
    });
    next();
  };
  return { registry, middleware };
}
