// Turns of the event loop for the costly fields. graphql-js and graphql-jit resolve a selection's
// fields, and complete their values, within one macrotask: forty analytics fields would hold the
// loop for seconds. Each costly field's last step (computing a series, shaping a statement) runs
// here instead, one per turn of the loop (setImmediate), in arrival order over all requests, so
// /healthz and other requests are served between them. A request past its deadline gets a
// TIMEOUT error for the fields still waiting, and they are not computed.
import { GraphQLError } from "graphql";

const queue: (() => void)[] = [];
let scheduled = false;

function next(): void {
  scheduled = false;
  queue.shift()?.();
  // the job's promise continuations (graphql completing the value) run before the next turn
  if (queue.length) {
    scheduled = true;
    setImmediate(next);
  }
}

export class TimeoutError extends GraphQLError {
  constructor(timeoutMs: number) {
    super(`the request ran longer than its ${timeoutMs} ms limit: ask for fewer analytics fields`, {
      extensions: { code: "TIMEOUT", timeoutMs },
    });
  }
}

export interface Deadline {
  /** epoch ms after which waiting work is refused */
  at: number;
  timeoutMs: number;
}

/** `work` in a turn of its own; refused with TimeoutError once `deadline` has passed. */
export function inTurn<T>(deadline: Deadline | undefined, work: () => T): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    queue.push(() => {
      if (deadline && Date.now() > deadline.at) return reject(new TimeoutError(deadline.timeoutMs));
      try {
        resolve(work());
      } catch (e) {
        reject(e);
      }
    });
    if (!scheduled) {
      scheduled = true;
      setImmediate(next);
    }
  });
}

/**
 * A long list as promises resolved `size` items per turn: graphql completes each item when its
 * promise resolves, so completing thousands of points is spread over turns too.
 */
export function inTurns<T>(deadline: Deadline | undefined, items: readonly T[], size: number): Promise<T>[] | T[] {
  if (items.length <= size) return items as T[];
  const out: Promise<T>[] = [];
  for (let start = 0; start < items.length; start += size) {
    const chunk = inTurn(deadline, () => items.slice(start, start + size));
    for (let i = 0; i < Math.min(size, items.length - start); i++) out.push(chunk.then((c) => c[i]));
  }
  return out;
}
