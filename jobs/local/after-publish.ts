// What follows a run's publish, whichever executor ran it (the run's owner, pipeline/run/lifecycle.ts,
// calls these in order): the rebalances published since the run read its inputs, re-applied on its
// snapshot; then the events step (webhooks), whose failure is logged, not the run's.
import type { AfterPublishStep } from "../../pipeline/run/lifecycle.ts";
import type { Log } from "../../pipeline/stages/context.ts";
import type { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { afterPublish, type EventSink } from "../webhooks/event-sink.ts";
import { reapplyMissedRebalances } from "./reapply.ts";

export interface AfterRunDeps {
  dataDir: string;
  catalog: Catalog;
  log: Log;
  /** The job whose re-applied rebalances run in it (their publishes record it). */
  job?: string;
  /** None: a later events step handles the publish. */
  events?: Pick<EventSink, "published">;
}

export function afterRunPublish(deps: AfterRunDeps): AfterPublishStep[] {
  const { dataDir, catalog, log, job, events } = deps;
  const reapply = { dataDir, catalog, log, job };
  return [
    (published, baseVersion) => reapplyMissedRebalances(reapply, baseVersion, published),
    (published) => afterPublish(events, published.version, log),
  ];
}
