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
