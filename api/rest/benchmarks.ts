// GET /benchmarks: every benchmark (any valid key), ordered by id.
import { z } from "zod";
import { objectsPayload } from "../output/payload.ts";
import { benchmarkList } from "../resources/benchmarks.ts";
import { BENCHMARK_COLUMNS, BenchmarkSchema } from "./resources.ts";
import { defineRoute } from "./route.ts";

export const benchmarksRoutes = [
  defineRoute({
    id: "benchmarks",
    endpoint: "benchmarks",
    path: "/benchmarks",
    summary: "Benchmarks (ids for the benchmark parameter of metrics and performance)",
    query: z.object({}),
    response: z.array(BenchmarkSchema),
    async resolve({ snapshot }) {
      return { key: "all", build: async () => objectsPayload(await benchmarkList(snapshot), BENCHMARK_COLUMNS) };
    },
  }),
];
