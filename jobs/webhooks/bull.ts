// Delivery jobs on Redis: the `webhooks` queue, one job per (event, webhook) under the id
// deliveryJobId (BullMQ keeps a finished job two days, so a publish computed again within them
// adds nothing), retried by the custom backoff `webhook` with the delay the attempt chose.
import { DelayedError, type Job, Queue, Worker } from "bullmq";
import { redisConnection } from "../queue/queue.ts";
import { type AttemptDeps, attemptDelivery, type DeliveryJob, deliveryJobId } from "./attempt.ts";
import { retryDelay } from "./settings.ts";

export const WEBHOOK_QUEUE = "webhooks";

/** Thrown by an attempt that is to be tried again after `delayMs` (the backoff strategy reads it). */
class RetryLater extends Error {
  constructor(readonly delayMs: number) {
    super(`retry in ${delayMs} ms`);
    this.name = "RetryLater";
  }
}

export function webhookQueue(url: string, prefix?: string): Queue {
  const q = new Queue(WEBHOOK_QUEUE, { connection: redisConnection(url), prefix });
  q.on("error", () => undefined);
  return q;
}

export async function addDeliveries(queue: Queue, jobs: DeliveryJob[], attempts: number): Promise<void> {
  for (let i = 0; i < jobs.length; i += 1000)
    await queue.addBulk(
      jobs.slice(i, i + 1000).map((data) => ({
        name: "deliver",
        data,
        opts: {
          jobId: deliveryJobId(data),
          attempts,
          backoff: { type: "webhook" },
          removeOnComplete: { age: 2 * 24 * 3600 },
          removeOnFail: { age: 7 * 24 * 3600 },
        },
      })),
    );
}

/**
 * A worker of the `webhooks` queue. At most `perWebhook` attempts to one webhook run at once in
 * this process: a further job of that webhook goes back to the delayed set for a moment (not an
 * attempt), so a slow receiver cannot take every slot.
 */
export function webhookWorker(url: string, deps: AttemptDeps, prefix?: string): Worker {
  const inflight = new Map<string, number>();
  const s = deps.settings;
  const worker = new Worker<DeliveryJob>(
    WEBHOOK_QUEUE,
    async (job: Job<DeliveryJob>, token?: string) => {
      const hook = job.data.webhookId;
      if ((inflight.get(hook) ?? 0) >= s.perWebhook) {
        await job.moveToDelayed(Date.now() + 100 + Math.random() * 200, token);
        throw new DelayedError();
      }
      inflight.set(hook, (inflight.get(hook) ?? 0) + 1);
      try {
        const r = await attemptDelivery(job.data, job.attemptsMade + 1, deps);
        if (r.retryInMs !== undefined) throw new RetryLater(r.retryInMs);
        return r.state;
      } finally {
        inflight.set(hook, (inflight.get(hook) ?? 1) - 1);
      }
    },
    {
      connection: redisConnection(url),
      prefix,
      concurrency: s.concurrency,
      settings: {
        backoffStrategy: (attemptsMade: number, _type?: string, err?: Error) =>
          err instanceof RetryLater ? err.delayMs : retryDelay(attemptsMade, s),
      },
    },
  );
  worker.on("error", () => undefined);
  return worker;
}
