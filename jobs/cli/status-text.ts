// `status` on a terminal: the same facts as its JSON (`--json`), as a few readable lines.
import type { PublishEntry } from "../../pipeline/store/snapshot/snapshots.ts";
import type { JobProgress } from "../queue/job-types.ts";
import type { RunStatus, Status } from "./status.ts";

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const pairs = (o: Record<string, number>, f: (n: number) => string = String) =>
  Object.entries(o)
    .map(([k, v]) => `${k} ${f(v)}`)
    .join(", ");

function runLine(r: RunStatus): string {
  const { done, known, allKnown } = r.jobs;
  const jobs = allKnown ? `${done} of ${known} jobs done` : `${done} jobs done, more to be added by ingest`;
  const pct = r.progress === null ? "" : ` (${Math.floor(r.progress * 100)} %)`;
  return `  run ${r.id}: ${r.state}, ${jobs}${pct}`;
}

function progressText(p: unknown): string {
  const q = p as Partial<JobProgress> | null;
  return q && typeof q.stage === "string" ? `, ${q.stage} ${q.done ?? 0}/${q.total ?? 0}` : "";
}

export function statusText(st: Status, dataDir: string): string {
  const out: string[] = [];
  const s = st.snapshot as {
    id: string;
    publishedAt: string;
    version: number;
    source: string;
    lastPriceDate: string;
    counts: Record<string, number>;
    timingsMs: Record<string, number>;
    recent: PublishEntry[];
  } | null;
  if (s) {
    out.push(`snapshot ${s.id} (version ${s.version}), published ${s.publishedAt}`);
    out.push(`  source ${s.source}, prices up to ${s.lastPriceDate}`);
    out.push(`  rows: ${pairs(s.counts)}`);
    const { total, ...stages } = s.timingsMs;
    out.push(
      `  took ${total === undefined ? "?" : secs(total)}` +
        `${Object.keys(stages).length ? ` (${pairs(stages, secs)})` : ""}`,
    );
    for (const e of s.recent.slice(1))
      out.push(`  before: ${e.kind}${e.portfolio ? ` ${e.portfolio}` : ""} ${e.snapshotId} at ${e.publishedAt}`);
  } else out.push(`no snapshot published under ${dataDir}`);
  for (const g of st.staging) out.push(`staging ${g.id}${g.job ? ` (job ${g.job})` : ""}: a run is writing it`);
  const q = st.queue;
  if (q) {
    const c = q.counts;
    out.push(
      `queue: ${q.workers} worker(s); waiting ${(c.waiting ?? 0) + (c.prioritized ?? 0)}, active ${c.active ?? 0}, ` +
        `delayed ${c.delayed ?? 0}, failed ${c.failed ?? 0} (a run's finished jobs are counted under its run)`,
    );
    for (const r of q.runs) out.push(runLine(r));
    for (const j of q.running)
      out.push(`  active ${j.id} (attempt ${j.attempt}, since ${j.startedAt ?? "?"}${progressText(j.progress)})`);
    out.push(
      q.scheduler
        ? `nightly run: "${q.scheduler.pattern}" in ${q.scheduler.tz ?? "UTC"}, next ${q.scheduler.next ?? "?"}`
        : "nightly run: not scheduled",
    );
  }
  return out.join("\n");
}
