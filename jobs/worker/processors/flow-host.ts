// What a flow job hands the plan's stage function of its step (pipeline/run/run-steps.ts, RunHost):
// each step runs in a job of its own, so the partitions are the flow's jobs, never run here.

import type { RunHost } from "../../../pipeline/run/run-steps.ts";
import type { StageContext } from "../../../pipeline/stages/context.ts";
import type { Conn } from "../../../pipeline/store/duck/duck.ts";

export function flowHost(
  ctx: StageContext,
  sourceDir: string,
  state: Pick<RunHost, "universes" | "levels">,
  own: Partial<Pick<RunHost, "users" | "signal" | "partitionsReady">> = {},
): RunHost {
  return {
    ctx,
    sourceDir,
    users: () => {
      throw new Error("only the ingest step reads the user portfolios");
    },
    oneProcess: false,
    universes: state.universes,
    levels: state.levels,
    plan: null,
    partitionsReady: async () => undefined,
    runPartitions: (name) => Promise.reject(new Error(`the flow runs the ${name} partitions as jobs of their own`)),
    ...own,
  };
}

/** A flow job's stage context on its DuckDB connection: its staging folder, catalog and log; `more` adds the rest. */
export function flowStageContext(
  f: { out: string; deps: Pick<StageContext, "catalog" | "log"> },
  conn: Conn,
  published: string | undefined,
  more: Omit<Partial<StageContext>, "conn" | "out" | "catalog" | "log" | "published"> = {},
): StageContext {
  return { conn, out: f.out, catalog: f.deps.catalog, log: f.deps.log, published, ...more };
}
