// The steps of a plan (plan.ts) in one process: each step once the steps it waits for are done,
// side by side where the plan lets them. The stage functions come from the plan's table
// (KIND_STAGES); the executor (jobs/local/) binds the publish and whatever else is its own.
// (Typed by the plan's shape, not by plan.ts: the plan's table names these types.)

/** A step's stage function over the state the run's steps share in this process. */
export type Stage<S> = (state: S) => Promise<void>;
export type StepStages<S, N extends string = string> = Partial<Record<N, Stage<S>>>;

interface Plan<N extends string> {
  kind: string;
  steps: { name: N; after: N[] }[];
}

/**
 * Runs every step of `plan` but the publish (the executor's, once this resolves) with its stage in
 * `stages`. On a failure the steps already running end first (they write into the staging folder
 * the executor then removes); the error is the first failing step's, in plan order.
 */
export async function executeSteps<S, N extends string>(
  plan: Plan<N>,
  stages: StepStages<S, N>,
  state: S,
): Promise<void> {
  const started = new Map<N, Promise<void>>();
  for (const step of plan.steps) {
    if (step.name === "publish") continue;
    const stage = stages[step.name];
    if (!stage) throw new Error(`the ${plan.kind} plan's step ${step.name} has no stage function`);
    const before = step.after.map((a) => started.get(a));
    started.set(
      step.name,
      Promise.all(before).then(() => stage(state)),
    );
  }
  const settled = await Promise.allSettled(started.values());
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) throw failed.reason;
}
