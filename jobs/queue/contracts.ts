// The contract of every job on the pipeline queue: its name, the zod schema of its data (what travels
// through Redis, parsed by the worker before any processor sees it) and of its result. Adding a job
// kind adds an entry here and its processor file (jobs/worker/processors/); the enqueue functions take only
// these names, and the worker's processor table must cover every one of them (checked by the types).
// A step of the plan (pipeline/run/plan.ts) adds no job kind: a partitioned step's comes from its entry
// there (partitionContracts), and a whole step without a kind of its own runs as a `step` job.
import { z } from "zod";
import {
  PARTITIONED_NAMES,
  PARTITIONED_STEPS,
  type PartitionedName,
  type PartitionInput,
  WHOLE_STEPS,
} from "../../pipeline/run/plan.ts";

const dateWindow = z.object({ from: z.string().min(1), to: z.string().min(1) });
const runData = z.object({
  sourceDir: z.string().min(1),
  /** sourceStamp(sourceDir) when enqueued (names the job); absent for scheduled runs (decided when taken). */
  sourceVersion: z.string().min(1).optional(),
  partition: z.string().optional(),
});

const flowData = z.object({
  sourceDir: z.string().min(1),
  /** sourceStamp(sourceDir) when enqueued; names the jobs and the staging folder. */
  sourceVersion: z.string().min(1),
  /**
   * This flow's own id (enqueue time + random), the same in all its jobs. A flow added again after
   * Redis lost the first (same job ids) gets another, hence another staging folder.
   */
  run: z.string().min(1),
});

/** A partition job's data: the flow's and the partition's input (pipeline/run/plan.ts). */
const partitionData = (n: PartitionedName) => flowData.extend(PARTITIONED_STEPS[n].input.shape);
type PartitionContracts = {
  [N in PartitionedName]: { data: z.ZodType<z.infer<typeof flowData> & PartitionInput<N>>; result: typeof doneResult };
};

/** A run or rebalance that published: the snapshot's id and the time it took. */
const snapshotResult = z.object({ snapshotId: z.string().min(1), totalMs: z.number() });
/** A job whose work is a part of a run's flow (or that only added the flow): its own id. */
const doneResult = z.object({ done: z.string() });

/** A contract per partitioned step of the plan: adding one there adds its job here. */
function partitionContracts(): PartitionContracts {
  return Object.fromEntries(
    PARTITIONED_NAMES.map((n) => [n, { data: partitionData(n), result: doneResult }]),
  ) as unknown as PartitionContracts;
}

export const JOB_CONTRACTS = {
  /** A whole run on one worker; a scheduled one (no sourceVersion) may only add a flow (`done`). */
  run: { data: runData, result: z.union([snapshotResult, doneResult]) },
  backfill: { data: runData.extend({ window: dateWindow }), result: snapshotResult },
  rebalance: {
    data: z.object({
      portfolioId: z.string().min(1),
      /** Hash of the definition that asked for it: a second request for the same one joins the first. */
      definitionVersion: z.string().min(1),
      /** The portfolio's change time that asked for it (ISO): a failure for good is recorded against it. */
      requestedAt: z.string().nullable().optional(),
    }),
    result: snapshotResult,
  },
  /** The parent of a run's flow: merges what its children staged and publishes. */
  publish: { data: flowData, result: snapshotResult },
  ingest: { data: flowData, result: doneResult },
  fundamentals: { data: flowData, result: doneResult },
  /** A whole step of the plan with no job kind of its own (jobs/queue/flow.ts, wholeStepPlacement). */
  step: { data: flowData.extend({ step: z.enum(WHOLE_STEPS) }), result: doneResult },
  // One job per partition of each partitioned step of the plan: the flow's data and the partition's input.
  ...partitionContracts(),
  backtest: {
    data: flowData.extend(PARTITIONED_STEPS.backtest.input.shape).extend({
      /** Absent: the job is a nightly append's whole `backtest` step (every portfolio continued). */
      portfolioId: z.string().min(1).optional(),
      /**
       * The worker (flow-worker.ts's `WORKER`: host, pid, random) that holds the run's universe in memory, if any:
       * a scheduling hint, not state: another worker leaves the job to it for a few seconds, then runs it itself.
       */
      affinity: z.string().optional(),
      /** For how long from its creation (`affinityWindowMs`; AFFINITY_MS when absent). */
      affinityMs: z.number().nonnegative().optional(),
    }),
    result: doneResult,
  },
} as const;

export type JobName = keyof typeof JOB_CONTRACTS;
export type JobData<N extends JobName> = z.infer<(typeof JOB_CONTRACTS)[N]["data"]>;
export type JobResultOf<N extends JobName> = z.infer<(typeof JOB_CONTRACTS)[N]["result"]>;

export const JOB_NAMES = Object.keys(JOB_CONTRACTS) as JobName[];

export const isJobName = (name: string): name is JobName => Object.hasOwn(JOB_CONTRACTS, name);

/** A job whose name no contract has, or whose data does not match its name's schema. */
export class JobContractError extends Error {
  readonly code: "UNKNOWN_JOB" | "INVALID_JOB_DATA" | "INVALID_JOB_RESULT";
  constructor(code: JobContractError["code"], message: string) {
    super(message);
    this.name = "JobContractError";
    this.code = code;
  }
}

/** The job's data as its contract says, or a JobContractError naming each wrong field. */
export function parseJobData<N extends JobName>(name: N, data: unknown): JobData<N>;
export function parseJobData(name: string, data: unknown): JobData<JobName>;
export function parseJobData(name: string, data: unknown): JobData<JobName> {
  if (!isJobName(name)) throw new JobContractError("UNKNOWN_JOB", `unknown job ${name}`);
  const r = JOB_CONTRACTS[name].data.safeParse(data);
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(data)"}: ${i.message}`);
  throw new JobContractError("INVALID_JOB_DATA", `${name} job data invalid: ${issues.join("; ")}`);
}

/**
 * A finished job's return value as its name's contract says (the worker checks it before BullMQ stores
 * it; a waiting command checks what it reads back), or a JobContractError naming each wrong field.
 */
export function parseJobResult<N extends JobName>(name: N, value: unknown): JobResultOf<N>;
export function parseJobResult(name: string, value: unknown): JobResultOf<JobName>;
export function parseJobResult(name: string, value: unknown): JobResultOf<JobName> {
  if (!isJobName(name)) throw new JobContractError("UNKNOWN_JOB", `unknown job ${name}`);
  const r = JOB_CONTRACTS[name].result.safeParse(value);
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(result)"}: ${i.message}`);
  throw new JobContractError("INVALID_JOB_RESULT", `${name} job result invalid: ${issues.join("; ")}`);
}

/** A finished job's return value when it is a published snapshot's, else null. */
export function snapshotResultOf(value: unknown): z.infer<typeof snapshotResult> | null {
  const r = snapshotResult.safeParse(value);
  return r.success ? r.data : null;
}
