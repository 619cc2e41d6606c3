// The one way into a portfolio rebalance. Every caller comes here: the API's requestRebalance port
// (a user portfolio was created, changed or deleted), the CLI's `rebalance` (jobs/queue/dispatch.ts),
// `npm start` for user portfolios the published snapshot holds no backtest of, a run re-applying
// rebalances that raced it (jobs/local/reapply.ts) and the worker's `rebalance` job (jobs/worker/worker.ts).
// One job-id recipe (rebalanceRequest), so the same change asked for by two callers is one job;
// one executor (runRebalance: the rebalance plan, jobs/local/rebalance-run.ts, with the catalog's current rules).
// In-process without Redis: one rebalance at a time per store in this process, requests for the
// same portfolio coalesced. With Redis: a `rebalance` job on the pipeline queue, taken by any worker.
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Queue } from "bullmq";
import type { Log } from "../../pipeline/stages/context.ts";
import { PortfolioNotFoundError } from "../../pipeline/stages/rebalance.ts";
import type { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { publishedRules } from "../../pipeline/store/read/published-portfolios.ts";
import { type Manifest, readManifest, readMeta } from "../../pipeline/store/snapshot/snapshots.ts";
import { catalogLookup, runRebalance } from "../local/rebalance-run.ts";
import type { DispatchResult, RebalanceDispatch } from "./dispatch-options.ts";
import { enqueueIdempotent } from "./enqueue.ts";
import { jobId, type RebalanceJobData, versionOf } from "./job-types.ts";
import { addJob, pipelineQueue } from "./queue.ts";

export interface RebalanceDeps {
  dataDir: string;
  catalog: Catalog;
  log: Log & { error?: (o: object, m: string) => void };
  /** The webhook events step (jobs/webhooks/event-sink.ts): a failure for good is sent as portfolio.failed. */
  events?: { rebalanceFailed(n: { portfolioId: string; requestedAt: string | null; reason: string }): Promise<void> };
}

/**
 * The job id and data of a rebalance of `portfolioId` as the catalog has it now: the definition
 * (or its absence: a predefined or deleted portfolio) and the time of its last change, so one
 * change asked for twice is one job and A → B → A again is a third. A finished job is reused only
 * while its snapshot is still the published one (jobs/queue/enqueue.ts).
 */
export function rebalanceRequest(catalog: Catalog, portfolioId: string): { jobId: string; data: RebalanceJobData } {
  const requestedAt = catalog.rebalanceRequestedAt(portfolioId);
  const definitionVersion = versionOf({
    spec: catalogLookup(catalog)(portfolioId) ?? { absent: portfolioId },
    at: requestedAt,
  });
  return {
    jobId: jobId("rebalance", definitionVersion, `portfolio-${portfolioId}`),
    data: { portfolioId, definitionVersion, requestedAt },
  };
}

/** Awaited (the CLI): in this process without Redis, else as a job that this process waits for. */
export async function dispatchRebalance(opts: RebalanceDispatch): Promise<DispatchResult> {
  await opts.catalog.refresh();
  if (!opts.redisUrl) {
    const meta = await runRebalance(opts, opts.portfolioId);
    return { snapshotId: meta.id, totalMs: meta.timingsMs.total };
  }
  const { jobId: id, data } = rebalanceRequest(opts.catalog, opts.portfolioId);
  const { viaQueue } = await import("./dispatch-queue.ts");
  return viaQueue({ ...opts, sourceDir: "" }, "rebalance", data, id);
}

/**
 * A rebalance that failed for good: logged with its reason and recorded in the catalog, so the
 * portfolio reads FAILED (not PENDING forever) until its next change or a run that publishes it.
 */
export async function noteRebalanceFailure(
  deps: RebalanceDeps,
  portfolioId: string,
  requestedAt: string | null,
  e: unknown,
): Promise<void> {
  const reason = String((e as Error)?.message ?? e);
  deps.log.warn({ portfolio: portfolioId, err: reason.split("\n")[0] }, "portfolio rebalance failed");
  await deps.catalog
    .recordRebalanceFailure(portfolioId, requestedAt, reason)
    .catch((err: unknown) =>
      deps.log.warn({ portfolio: portfolioId, err: String(err) }, "could not record the failed rebalance"),
    );
  await deps.events
    ?.rebalanceFailed({ portfolioId, requestedAt, reason })
    .catch((err: unknown) => deps.log.warn({ portfolio: portfolioId, err: String(err) }, "portfolio.failed not sent"));
}

/** Fire-and-forget requests (the API port, start-up). */
export interface Rebalancer {
  request(portfolioId: string): void;
  /** Resolves when every request made so far has been handled (tests). */
  idle(): Promise<void>;
  /** Shutdown: stops this rebalancer's running rebalance and drops its waiting ones (the next start finds them). */
  close(): Promise<void>;
}

/** The in-process lane of one store: every in-process rebalancer of this process on it shares it. */
interface Lane {
  waiting: Map<string, RebalanceDeps>;
  running: Promise<void> | null;
  /** The rebalance process now running and whose request it is. */
  current: { deps: RebalanceDeps; child: ChildProcess } | null;
}
const lanes = new Map<string, Lane>();

// dist/jobs/local/rebalance-child.js; from the sources (tests, tsx) the .ts through tsx's loader
const FROM_SOURCES = import.meta.url.endsWith(".ts");
const CHILD = fileURLToPath(
  new URL(FROM_SOURCES ? "../local/rebalance-child.ts" : "../local/rebalance-child.js", import.meta.url),
);

/** A rebalance running in a process of its own (jobs/local/rebalance-child.ts) and what it published. */
export interface ChildRebalance {
  child: ChildProcess;
  done: Promise<{ snapshotId: string; totalMs: number }>;
}

/**
 * runRebalance in a process of its own (jobs/local/rebalance-child.ts): the serving process stays small and
 * responsive. Used by the in-process lane below and by the worker inside `npm start` (processors/rebalance.ts).
 */
export function forkRebalance(deps: RebalanceDeps, id: string, job?: string): ChildRebalance {
  const child = fork(CHILD, [deps.dataDir, id, ...(job ? [job] : [])], {
    execArgv: FROM_SOURCES ? ["--import", "tsx"] : [],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  child.send({ catalog: deps.catalog.path }); // not in argv: a PostgreSQL URL may carry a password
  const done = new Promise<{ snapshotId: string; totalMs: number }>((resolve, reject) => {
    let outcome: ChildOutcome | null = null;
    child.on("message", (m: { log?: { level: "info" | "warn"; o: object; msg?: string } } & ChildOutcome) => {
      if (m?.log) deps.log[m.log.level](m.log.o, m.log.msg);
      else outcome = m;
    });
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      const o = outcome as ChildOutcome | null;
      if (o?.ok && o.snapshotId) resolve({ snapshotId: o.snapshotId, totalMs: o.totalMs ?? 0 });
      else if (o?.notFound) reject(new PortfolioNotFoundError(id));
      else reject(new Error(o?.error ?? `the rebalance process ended with ${signal ?? `exit code ${code}`}`));
    });
  });
  return { child, done };
}

/** What jobs/local/rebalance-child.ts sends last. */
interface ChildOutcome {
  ok: boolean;
  snapshotId?: string;
  totalMs?: number;
  error?: string;
  notFound?: boolean;
}

/** One rebalance of the lane in a process of its own. */
async function rebalanceInChild(lane: Lane, deps: RebalanceDeps, id: string): Promise<void> {
  const { child, done } = forkRebalance(deps, id);
  lane.current = { deps, child };
  try {
    await done;
  } finally {
    lane.current = null;
  }
}

/**
 * One at a time per store (each publish builds on the one before), each in a process of its own;
 * a portfolio asked for twice while waiting runs once.
 */
export function inProcessRebalancer(deps: RebalanceDeps): Rebalancer {
  const lane = lanes.get(deps.dataDir) ?? { waiting: new Map(), running: null, current: null };
  lanes.set(deps.dataDir, lane);
  let closed = false;
  const drain = async () => {
    for (const [id, d] of lane.waiting) {
      lane.waiting.delete(id);
      const requestedAt = d.catalog.rebalanceRequestedAt(id);
      try {
        if (!readManifest(d.dataDir)) {
          d.log.warn(
            { portfolio: id },
            "no snapshot published yet: the portfolio is computed by the first pipeline run",
          );
          continue;
        }
        await rebalanceInChild(lane, d, id);
      } catch (e) {
        // deleted before any snapshot held it: nothing to drop; stopped by close: the next start finds it
        if (e instanceof PortfolioNotFoundError && !d.catalog.userPortfolio(id)) continue;
        if (closed && d === deps) continue;
        await noteRebalanceFailure(d, id, requestedAt, e);
      }
    }
    lane.running = null;
  };
  return {
    request(id) {
      lane.waiting.set(id, deps);
      lane.running ??= drain();
    },
    async idle() {
      while (lane.running) await lane.running;
    },
    async close() {
      closed = true;
      for (const [id, d] of lane.waiting) if (d === deps) lane.waiting.delete(id);
      if (lane.current?.deps === deps) lane.current.child.kill("SIGTERM");
      await lane.running;
    },
  };
}

/** Enqueues a `rebalance` job with the one recipe's id; any pipeline worker takes it (jobs/worker/worker.ts). */
export function queueRebalancer(
  redisUrl: string,
  catalog: Catalog,
  log: Log,
  prefix?: string,
  /** The store: a finished job of the same id is then reused only while its snapshot is published. */
  dataDir?: string,
): Rebalancer {
  let queue: Queue | null = null;
  const pending = new Set<Promise<unknown>>();
  return {
    request(id) {
      queue ??= pipelineQueue(redisUrl, prefix);
      const q = queue;
      const { jobId: jid, data } = rebalanceRequest(catalog, id);
      const p = (
        dataDir
          ? enqueueIdempotent(q, jid, dataDir, () => addJob(q, "rebalance", data, { jobId: jid }))
          : addJob(q, "rebalance", data, { jobId: jid })
      )
        .catch((e: unknown) => log.warn({ portfolio: id, err: String(e) }, "could not enqueue the portfolio rebalance"))
        .finally(() => pending.delete(p));
      pending.add(p);
    },
    async idle() {
      await Promise.all(pending);
    },
    async close() {
      await this.idle();
      await queue?.close();
    },
  };
}

/**
 * The catalog's user portfolios the published snapshot holds no backtest of for their current
 * rules, published after their last change (what the API reads as PENDING): one query over the
 * snapshot's portfolios table, never the snapshot loaded.
 */
export async function portfoliosWithoutBacktest(catalog: Catalog, dataDir: string, published: Manifest) {
  const users = catalog.allUserPortfolios();
  const rules = await publishedRules(
    dataDir,
    published.snapshotId,
    users.map((u) => u.id),
  );
  const createdAt = Date.parse(readMeta(dataDir, published.snapshotId).createdAt);
  return users
    .filter(({ ownerId: _o, createdAt: _c, ...current }) => {
      const stored = rules.get(current.id);
      if (stored === undefined || versionOf(JSON.parse(stored)) !== versionOf(current)) return true;
      const changed = catalog.rebalanceRequestedAt(current.id);
      return changed !== null && Date.parse(changed) > createdAt;
    })
    .map((u) => u.id);
}

/** Hands `ids` (e.g. portfoliosWithoutBacktest's) to `rebalancer`, saying so once. */
export function requestAll(deps: RebalanceDeps, ids: string[], rebalancer: Rebalancer): void {
  for (const id of ids) rebalancer.request(id);
  if (ids.length) deps.log.info({ portfolios: ids }, "user portfolios without a backtest of their rules: rebalancing");
}
