// Benchmarks (ids for the benchmark parameter of metrics and performance), ordered by id.
import { numericId } from "./ordering.ts";
import { benchmarkObject } from "./shapes.ts";
import type { SnapshotRef } from "./snapshot-access.ts";
import * as access from "./snapshot-access.ts";

export async function benchmarkList(s: SnapshotRef): Promise<ReturnType<typeof benchmarkObject>[]> {
  return [...(await access.benchmarks(s))].sort((a, b) => numericId(a.id, b.id)).map(benchmarkObject);
}
