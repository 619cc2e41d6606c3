// The nightly run as a BullMQ job scheduler. Everything that would only fail at 2 a.m. is checked
// when it is registered: the source folder and its required tables, the cron pattern, the zone.
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { CronExpressionParser } from "cron-parser";
import { locateTable } from "../../pipeline/sources/locate.ts";
import type { JobName } from "./contracts.ts";
import type { RunJobData } from "./job-types.ts";
import { closeQuietly, NIGHTLY_SCHEDULER, pipelineQueue } from "./queue.ts";

export const DEFAULT_CRON = "0 2 * * *";
export const DEFAULT_TZ = "UTC";

export class ScheduleError extends Error {
  readonly status = 400;
  constructor(message: string) {
    super(message);
    this.name = "ScheduleError";
  }
}

/** Throws ScheduleError with one plain line naming what is wrong. Returns the next run time. */
export function validateSchedule(sourceDir: string, cron: string, tz: string, now = new Date()): Date {
  if (!existsSync(sourceDir) || !statSync(sourceDir).isDirectory())
    throw new ScheduleError(`source ${sourceDir} is not a directory; nothing was scheduled`);
  for (const table of ["companies", "prices"]) {
    let found: ReturnType<typeof locateTable>;
    try {
      found = locateTable(sourceDir, table);
    } catch (e) {
      throw new ScheduleError(`source ${sourceDir}: ${(e as Error).message}; nothing was scheduled`);
    }
    if (!found)
      throw new ScheduleError(
        `source ${sourceDir} has no ${table} table (${table}.csv, ${table}.parquet ` +
          `or ${table}/); nothing was scheduled`,
      );
  }
  try {
    new Intl.DateTimeFormat("en", { timeZone: tz });
  } catch {
    throw new ScheduleError(
      `time zone "${tz}" is not an IANA zone name (e.g. UTC, Europe/Paris); nothing was scheduled`,
    );
  }
  const fields = cron.trim().split(/\s+/).length;
  let next: Date;
  try {
    if (fields !== 5 && fields !== 6) throw new Error(`${fields} field(s)`);
    next = CronExpressionParser.parse(cron, { tz, currentDate: now }).next().toDate();
  } catch (e) {
    const why = String((e as Error).message).replace(/^(Validation|Constraint) error,?\s*/i, "");
    throw new ScheduleError(
      `cron "${cron}" is not a valid pattern "minute hour day-of-month month day-of-week" ` +
        `(${why}); nothing was scheduled`,
    );
  }
  return next;
}

/** Registers (or updates) the nightly job scheduler: one `run` of `sourceDir` on a cron pattern in a zone. */
export async function scheduleNightly(
  redisUrl: string,
  sourceDir: string,
  pattern = DEFAULT_CRON,
  prefix?: string,
  tz = DEFAULT_TZ,
): Promise<{ next: number }> {
  const dir = resolve(sourceDir);
  const next = validateSchedule(dir, pattern, tz);
  const queue = pipelineQueue(redisUrl, prefix);
  try {
    // The source version is taken when the run starts: the nightly source changes between runs.
    const data: RunJobData = { sourceDir: dir };
    const name: JobName = "run";
    await queue.upsertJobScheduler(NIGHTLY_SCHEDULER, { pattern, tz }, { name, data });
    return { next: next.getTime() };
  } finally {
    await closeQuietly(queue);
  }
}

/** Removes the nightly job scheduler; false when none was registered. A run it already added stays. */
export async function unscheduleNightly(redisUrl: string, prefix?: string): Promise<boolean> {
  const queue = pipelineQueue(redisUrl, prefix);
  try {
    return await queue.removeJobScheduler(NIGHTLY_SCHEDULER);
  } finally {
    await closeQuietly(queue);
  }
}
