// Idempotent enqueue: a job id names what is computed (stage + source version + partition), so the
// same request made twice is one job. A finished job is reused only while its snapshot is still the
// published one (never when forced); a failed one, or one whose result was since replaced, is enqueued afresh.
// A forced request removes the completed job and adds it again under the same id rather than under
// a new one: the id keeps naming what is computed, so forced requests made at once, and plain
// requests meanwhile, still join one job instead of computing the same source side by side.
import type { Job, Queue } from "bullmq";
import { readManifest } from "../../pipeline/store/snapshot/snapshots.ts";
import { snapshotResultOf } from "./contracts.ts";

export interface Enqueued {
  job: Job;
  /** true: an equal job was already queued or running; "done": its result is the published snapshot. */
  joined: boolean | "done";
  /** The manifest version when enqueued: a publish by this job has a higher one. */
  sinceVersion: number;
}

export async function enqueueIdempotent(
  queue: Queue,
  id: string,
  dataDir: string,
  add: () => Promise<Job>,
  force = false,
): Promise<Enqueued> {
  const sinceVersion = readManifest(dataDir)?.version ?? 0;
  const existing = await queue.getJob(id);
  if (existing) {
    const state = await existing.getState();
    if (state === "completed") {
      const r = snapshotResultOf(existing.returnvalue); // null: not a snapshot (a run that added a flow)
      if (!force && r && readManifest(dataDir)?.snapshotId === r.snapshotId)
        return { job: existing, joined: "done", sinceVersion };
    }
    if (state === "completed" || state === "failed")
      await existing.remove().catch(() => undefined); // raced with another remover: fine
    else if (state !== "unknown") return { job: existing, joined: true, sinceVersion };
  }
  // Two dispatchers racing here add the same id: BullMQ keeps one job and returns it to both.
  const job = await add();
  return { job, joined: false, sinceVersion };
}
