// The queue dashboard (@bull-board/express) over the pipeline queue; api/app.ts mounts it behind
// the `admin` scope. Only with REDIS_URL: without Redis there is no queue to show.
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import type { Queue } from "bullmq";
import type { RequestHandler } from "express";
import { pipelineQueue } from "../queue/queue.ts";

export const DASHBOARD_PATH = "/admin/queues";
/** `<link href="http(s)://…">` in bull-board's page (its Google fonts). */
const OUTSIDE_LINKS = /<link\b[^>]*\bhref="https?:\/\/[^"]*"[^>]*>\s*/g;

export function queueDashboard(
  redisUrl: string,
  prefix?: string,
): { path: string; router: RequestHandler; queue: Queue } {
  const queue = pipelineQueue(redisUrl, prefix);
  const server = new ExpressAdapter();
  server.setBasePath(DASHBOARD_PATH);
  createBullBoard({ queues: [new BullMQAdapter(queue)], serverAdapter: server });
  const board = server.getRouter() as RequestHandler;
  // bull-board's page links its fonts from Google's servers: a request leaving the host (failing
  // where there is no internet) for a look only. Sent without the link, the page uses local fonts.
  const router: RequestHandler = (req, res, next) => {
    const send = res.send.bind(res);
    res.send = (body?: unknown) => send(typeof body === "string" ? body.replace(OUTSIDE_LINKS, "") : body);
    board(req, res, next);
  };
  return { path: DASHBOARD_PATH, router, queue };
}
