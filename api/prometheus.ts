// Prometheus metrics (prom-client), one registry per app: request count and latency per route,
// snapshot age, body cache size. Route labels are the endpoint ids (bounded cardinality).
import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type { OnFinish } from "./access-log.ts";
import type { AnswerCache } from "./output/answer-cache.ts";
import type { BodyCache } from "./output/lru.ts";
import { RequestMetrics } from "./request-metrics.ts";
import type { SnapshotRef } from "./resources/snapshot-access.ts";

export function createMetrics(snapshot: () => SnapshotRef | null, cache: BodyCache, answers?: AnswerCache) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new RequestMetrics();
  requests.register(registry);
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

  if (answers) {
    new Gauge({
      name: "api_response_cache_bytes",
      help: "Bytes held by the fast path's response cache (bodies and their compressed forms)",
      registers: [registry],
      collect() {
        this.set(answers.bytes);
      },
    });
    new Counter({
      name: "api_response_cache_fast_total",
      help: "Requests the node:http fast path answered (from the response cache, or its rate limit's 429)",
      registers: [registry],
      collect() {
        this.reset();
        this.inc(answers.fastServed);
      },
    });
  }

  const observe: OnFinish = (req, res, ms) => {
    const route = (res.locals.route as string | undefined) ?? (req.path === "/healthz" ? "healthz" : "other");
    requests.record(route, req.method, res.statusCode, ms / 1000);
  };
  return { registry, observe };
}
