// Whole steps test/jobs/whole-steps.test.ts adds to a full run's plan, as an entry in
// pipeline/run/plan.ts would: each writes a one-row table into the staging folder by rename, which the
// publish carries into the snapshot. Placed by the flow as: `toyCounts` a step job added by ingest's,
// `toyDoubled` one added by toyCounts' job, `toyFundamentals` one added by the fundamentals job;
// `toyMetrics` (after the stock metric partitions) and `toyLast` (after it) in the publish job.
import { renameSync } from "node:fs";
import { join } from "node:path";
import type { PlanStep } from "../../pipeline/run/plan.ts";
import type { RunHost } from "../../pipeline/run/run-steps.ts";
import { rows } from "../../pipeline/store/duck/duck.ts";

type Host = Pick<RunHost, "ctx">;

/** What the toy stages did, and which of them fail once (after writing: a retry finds its output). */
export const toyRuns = { calls: [] as string[], failOnce: new Set<string>() };

async function writeTable(h: Host, step: string, table: string, select: string, files: string[] = []) {
  toyRuns.calls.push(step);
  const file = join(h.ctx.out, `${table}.parquet`);
  const params = Object.fromEntries(files.map((f, k) => [`f${k}`, join(h.ctx.out, f)]));
  // a connection of its own: inline, other steps query the run's database at the same time
  const conn = await h.ctx.connect!();
  // COPY takes no bound values: the files are read into a table first, the path is the test's own
  await conn.run(`create or replace temp table ${table} as ${select}`, params);
  await conn.run(`copy ${table} to '${file}.tmp' (format parquet)`);
  renameSync(`${file}.tmp`, file);
  if (toyRuns.failOnce.delete(step)) throw new Error(`${step} fails once, after writing its table`);
}

const count = async (h: Host, file: string) =>
  Number(
    (await rows(await h.ctx.connect!(), "select count(*) as n from read_parquet($f)", { f: join(h.ctx.out, file) }))[0]!
      .n,
  );

export const TOY_STAGES = {
  toyCounts: (h: Host) =>
    writeTable(h, "toyCounts", "toy_counts", "select count(*)::bigint as companies from read_parquet($f0)", [
      "companies.parquet",
    ]),
  toyDoubled: (h: Host) =>
    writeTable(h, "toyDoubled", "toy_doubled", "select companies * 2 as twice from read_parquet($f0)", [
      "toy_counts.parquet",
    ]),
  toyFundamentals: (h: Host) => writeTable(h, "toyFundamentals", "toy_fundamentals", "select 'split' as after"),
  toyMetrics: async (h: Host) => {
    const n = await count(h, join("stock_metrics", "*.parquet"));
    await writeTable(h, "toyMetrics", "toy_metrics", `select ${n}::bigint as n`);
  },
  toyLast: (h: Host) =>
    writeTable(h, "toyLast", "toy_last", "select n + 1 as more from read_parquet($f0)", ["toy_metrics.parquet"]),
};
export type ToyStep = keyof typeof TOY_STAGES;
export const TOY_NAMES = Object.keys(TOY_STAGES) as ToyStep[];

/** The full plan with the toy steps, the publish waiting for them too. */
export function withToySteps(steps: PlanStep[]): PlanStep[] {
  const toys = [
    { name: "toyCounts", after: ["ingest"] },
    { name: "toyDoubled", after: ["toyCounts"] },
    { name: "toyFundamentals", after: ["fundamentals"] },
    { name: "toyMetrics", after: ["analytics"] },
    { name: "toyLast", after: ["toyMetrics", "merge"] },
  ] as unknown as PlanStep[];
  const publish = steps.find((s) => s.name === "publish")!;
  return [
    ...steps.filter((s) => s !== publish),
    ...toys,
    { name: "publish", after: [...publish.after, ...(["toyDoubled", "toyFundamentals", "toyLast"] as never[])] },
  ];
}
