// GET /benchmarks: every benchmark (any valid key), ordered by id.
import { z } from "zod";
import { objectsPayload } from "../output/payload.ts";
import { BENCHMARK_COLUMNS, benchmarkObject, BenchmarkSchema } from "./resources.ts";
import { defineRoute } from "./route.ts";

const byId = (a: string, b: string) => {
  const x = Number(a);
  const y = Number(b);
  if (Number.isFinite(x) && Number.isFinite(y) && x !== y) return x - y;
  return a < b ? -1 : a > b ? 1 : 0;
};

export const benchmarksRoutes = [
  defineRoute({
    id: "benchmarks",
    endpoint: "benchmarks",
    path: "/benchmarks",
    summary: "Benchmarks (ids for the benchmark parameter of metrics and performance)",
    query: z.object({}),
    response: z.array(BenchmarkSchema),
    resolve({ snapshot }) {
      return {
        key: "all",
        build: () => objectsPayload([...snapshot.benchmarks].sort((a, b) => byId(a.id, b.id)).map(benchmarkObject), BENCHMARK_COLUMNS),
      };
    },
  }),
];
