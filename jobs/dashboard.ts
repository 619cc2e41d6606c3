// The queue dashboard (@bull-board/express) over the pipeline queue; api/app.ts mounts it behind
// the `admin` scope. Only with REDIS_URL: without Redis there is no queue to show.
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import type { Queue } from "bullmq";
import type { RequestHandler } from "express";
import { pipelineQueue } from "./queue.ts";

export const DASHBOARD_PATH = "/admin/queues";

export function queueDashboard(
  redisUrl: string,
  prefix?: string,
): { path: string; router: RequestHandler; queue: Queue } {
  const queue = pipelineQueue(redisUrl, prefix);
  const server = new ExpressAdapter();
  server.setBasePath(DASHBOARD_PATH);
  createBullBoard({ queues: [new BullMQAdapter(queue)], serverAdapter: server });
  return { path: DASHBOARD_PATH, router: server.getRouter() as RequestHandler, queue };
}
