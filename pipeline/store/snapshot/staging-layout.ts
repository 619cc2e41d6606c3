// Every path of a run's staging area, and its records. A run writes its snapshot into
// `snapshots/.staging-<id>` (invisible to readers until published); beside it `<folder>.tmp` holds
// the run's DuckDB file and spill files, `<folder>.flow` a flow's records set aside while it publishes,
// and `locks/staging-<id>.alive` is its heartbeat. Inside, `.flow/` holds what a flow's jobs leave
// each other (plain JSON records, read here through their zod schemas: a corrupt one is a
// StagingRecordError naming the file, not a wrong value deep inside a step).
import { randomBytes } from "node:crypto";
import { existsSync, linkSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { z } from "zod";
import type { PipelineErrorCode } from "../../domain/errors.ts";
import type { PortfolioSource } from "../../sources/portfolios-json.ts";
import type { PortfolioRules } from "../../types.ts";
import type { UserPortfolio } from "../catalog/types.ts";
import { writeFileAtomic } from "../coordination/atomic-write.ts";
import { locksDir } from "../coordination/publish-lock.ts";

export const snapshotsDir = (dataDir: string) => join(dataDir, "snapshots");
/** The data folder a published snapshot's folder (`snapshotsDir/<id>`) belongs to. */
export const dataDirOfSnapshot = (snapshotFolder: string) => dirname(dirname(snapshotFolder));
/**
 * Whole-table exports kept as files (pipeline/store/read/export-cache.ts), one folder per snapshot id:
 * outside the snapshots (a published folder never changes), removed on a server's swap and by prune.
 */
export const exportCacheDir = (dataDir: string) => join(dataDir, "cache", "exports");
/** The cached export `name` (`<table>.<arrow|parquet>`) of snapshot `id`. */
export const exportCacheFile = (dataDir: string, id: string, name: string) => join(exportCacheDir(dataDir), id, name);
/** The name prefix of staging folders in snapshotsDir (ids have no dots: siblings are `<folder>.<what>`). */
export const STAGING = ".staging-";
/** The staging folder of id `id`. */
export const stagingPath = (dataDir: string, id: string) => join(snapshotsDir(dataDir), `${STAGING}${id}`);
/** Its heartbeat: while fresh, prune leaves the folder and its siblings alone. */
export const stagingBeat = (dataDir: string, id: string) => join(locksDir(dataDir), `staging-${id}.alive`);

/** Where the flow's records live inside a staging folder; removed by the merge, set aside by the publish. */
const FLOW_DIR = ".flow";

/** The paths of the staging folder `out`. */
export function stagingLayout(out: string) {
  const flow = join(out, FLOW_DIR);
  return {
    out,
    /** The run's DuckDB file and spill files (pipeline/store/duck/duck.ts openStagingDuck). */
    tmp: `${out}.tmp`,
    /** The flow's records while the folder is published (it must not carry them). */
    aside: `${out}.flow`,
    flowDir: flow,
    /** An append's or a full run's, decided once for the flow's ingest and fundamentals jobs (FlowDecision). */
    decision: join(flow, "decision.json"),
    /** What ingest leaves for the later steps (FlowPlan). */
    plan: join(flow, "plan.json"),
    /** What ingest records for the publish besides the plan (RunRecord). */
    run: join(flow, "run.json"),
    /** The fundamentals split, written last: present means the split is whole. */
    financials: join(flow, "financials.json"),
    /** What an append's ingest leaves for its other steps and the publish (AppendRecord). */
    append: join(flow, "append.json"),
    /** The portfolio parts merged into the snapshot's tables. */
    merged: join(flow, "merged.json"),
    /** The snapshot being published, for a retry to find its publish in the manifest's log. */
    publishing: join(flow, "publishing.json"),
    /** publishing.json once set aside. */
    publishingAside: join(`${out}.flow`, "publishing.json"),
    /** The fundamentals' slices, one folder per ticker range. */
    fundamentalsSplit: join(flow, "fundamentals-split"),
    /** Each portfolio's backtest output before the merge. */
    portfolioParts: join(flow, "portfolios"),
  };
}
export type StagingLayout = ReturnType<typeof stagingLayout>;

const tickerRange = z.object({ part: z.number().int(), from: z.string().nullable(), to: z.string().nullable() });
const portfolioEntry = z.object({
  // the rules as the catalog or source gave them (validated there); here: an object with an id
  rules: z.custom<PortfolioRules>(
    (v) => typeof v === "object" && v !== null && typeof (v as { id?: unknown }).id === "string",
    "expected portfolio rules with an id",
  ),
  ownerId: z.string().nullable(),
  createdAt: z.string().nullable(),
});

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;

/** The schema of each record of a staging folder. */
export const STAGING_RECORDS = {
  plan: z.object({
    counts: z.object({
      companies: z.number(),
      priceDates: z.number(),
      ratings: z.number(),
      benchmarks: z.number(),
    }),
    lastPriceDate: z.string(),
    /** Stock metric partitions (ticker ranges of the prices). */
    ranges: z.array(tickerRange),
    /** Portfolio ids in the order the in-process runner backtests them. */
    portfolioIds: z.array(z.string()),
    portfolios: z.array(portfolioEntry),
  }),
  run: z.object({
    /** The ingest job's creation time: a plan from another flow of the same source is not reused. */
    ingestJob: z.number(),
    baseVersion: z.number(),
    ingestMs: z.number(),
    startedAt: z.number(),
    /**
     * The fingerprint of the source's bytes as ingest read them: the snapshot's sourceId. Absent from
     * a record written before jobs were named by the stamp, when the flow's sourceVersion was it.
     */
    sourceId: z.string().optional(),
  }),
  financials: z.object({ parts: z.number().int().nonnegative() }),
  /**
   * Whether the flow's source continues the published snapshot, as the first of its ingest and
   * fundamentals jobs to read that snapshot found (createStagingRecord): the other follows it, so a
   * publish landing between their reads cannot make them disagree. "append": the fundamentals are
   * left to ingest; `fellBack`: ingest then found that it is not one and runs a full run, the
   * fundamentals split by ingest. "full": a full run, the fundamentals job splitting them.
   */
  decision: z.object({ kind: z.enum(["append", "full"]), fellBack: z.boolean().optional() }),
  /** What an append's ingest step leaves (pipeline/stages/append.ts): the later steps read nothing else of it. */
  append: z.object({
    /** The published snapshot's folder it continues. */
    base: z.string().min(1),
    baseLastPriceDate: z.string(),
    lastPriceDate: z.string(),
    /** The new days' prices and ratings (null: none), as staged files of this run. */
    newPrices: z.string().min(1),
    newRatings: z.string().nullable(),
    /** The published rating date that applies to the first new day (null: none does). */
    tailRatingDate: z.string().nullable(),
    /** The returns' ticker-range parts (linked from the published ones), the appended days' file, their ranges. */
    returns: z.object({ parts: z.array(z.string()), days: z.string(), ranges: z.array(tickerRange) }),
    /** The portfolio and benchmark definitions the backtests continue, and the catalog's user portfolios. */
    definitions: z.custom<PortfolioSource>(
      (v) => isObject(v) && Array.isArray(v.portfolios) && Array.isArray(v.benchmarks),
      "expected portfolio and benchmark definitions",
    ),
    users: z.array(
      z.custom<UserPortfolio>(
        (v) =>
          isObject(v) && typeof v.id === "string" && typeof v.ownerId === "string" && typeof v.createdAt === "string",
        "expected a user portfolio with an id, owner and creation time",
      ),
    ),
    counts: z.object({
      companies: z.number().int(),
      priceDates: z.number().int(),
      ratings: z.number().int(),
      portfolios: z.number().int(),
      benchmarks: z.number().int(),
    }),
    newDays: z.number().int(),
  }),
  merged: z.object({}),
  publishing: z.object({ snapshotId: z.string().min(1), baseVersion: z.number(), totalMs: z.number() }),
} as const;
export type StagingRecordKind = keyof typeof STAGING_RECORDS;
export type StagingRecord<K extends StagingRecordKind> = z.infer<(typeof STAGING_RECORDS)[K]>;

/** A record of a run (staging or published) that is not JSON or not of its schema (another version's, or damaged). */
export class StagingRecordError extends Error {
  readonly code: PipelineErrorCode = "staging_record_corrupt";
  constructor(
    readonly path: string,
    detail: string,
  ) {
    super(`the record ${path} is corrupt (${detail}); run the command again`);
    this.name = "StagingRecordError";
  }
}

/** The JSON record at `path` (null when absent), through `schema`. */
export function readJsonRecord<S extends z.ZodType>(path: string, schema: S): z.infer<S> | null {
  if (!existsSync(path)) return null;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new StagingRecordError(path, `not JSON: ${(e as Error).message}`);
  }
  return parseJsonRecord(path, schema, json);
}

/** `json` (read from `path`) through `schema`, or a StagingRecordError naming each wrong field. */
export function parseJsonRecord<S extends z.ZodType>(path: string, schema: S, json: unknown): z.infer<S> {
  const r = schema.safeParse(json);
  if (!r.success)
    throw new StagingRecordError(
      path,
      r.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(record)"}: ${i.message}`).join("; "),
    );
  return r.data;
}

/** The staging record at `path` (null when absent), through its kind's schema. */
export function readStagingRecord<K extends StagingRecordKind>(kind: K, path: string): StagingRecord<K> | null {
  return readJsonRecord(path, STAGING_RECORDS[kind]) as StagingRecord<K> | null;
}

/**
 * Writes the record (`atomic`: under `<path>.tmp`, then renamed: present means whole). The bytes are
 * the value's JSON as given, not as parsed: what a reader of an older version finds is unchanged.
 */
export function writeStagingRecord<K extends StagingRecordKind>(
  _kind: K,
  path: string,
  value: StagingRecord<K>,
  atomic = false,
): void {
  if (atomic) writeFileAtomic(path, JSON.stringify(value), `${path}.tmp`);
  else writeFileSync(path, JSON.stringify(value));
}

/**
 * Writes the record unless the path holds one already: the first writer wins (written aside, then
 * hard-linked into place, which fails when the path exists, so a reader never sees half of either).
 * Returns the record in place: this one, or the one written first.
 */
export function createStagingRecord<K extends StagingRecordKind>(
  kind: K,
  path: string,
  value: StagingRecord<K>,
): StagingRecord<K> {
  // a name of its own: two jobs of one process may decide at once
  const tmp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  writeFileSync(tmp, JSON.stringify(value));
  try {
    linkSync(tmp, path);
    return value;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    const first = readStagingRecord(kind, path);
    if (!first) throw new StagingRecordError(path, "removed while it was read");
    return first;
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * Removes everything the staging folder `out` holds but its decision record: what an attempt of
 * an append's ingest staged (a fallback to a full run, or a retry, starts on an empty folder) goes,
 * the flow's decision stays for its other job.
 */
export function emptyStaging(out: string): void {
  if (!existsSync(out)) return;
  const layout = stagingLayout(out);
  for (const name of readdirSync(out))
    if (name !== basename(layout.flowDir)) rmSync(join(out, name), { recursive: true, force: true });
  if (!existsSync(layout.flowDir)) return;
  for (const name of readdirSync(layout.flowDir))
    if (name !== basename(layout.decision)) rmSync(join(layout.flowDir, name), { recursive: true, force: true });
}
