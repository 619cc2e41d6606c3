// Command-line values checked before any work starts, so a mistake gets one plain line and the
// usage instead of a library's error (ENOENT from a scan, DuckDB's conversion error with its SQL).
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { UsageError } from "./run-command.ts";

// z.iso.date() knows month lengths and leap years: 2025-13-01 and 2025-02-29 are refused.
const isoDate = z.iso.date();

/** The window of a backfill: both ends real calendar dates, from <= to. */
export function backfillWindow(values: { from?: string; to?: string }): { from: string; to: string } {
  for (const name of ["from", "to"] as const) {
    const v = values[name];
    if (v === undefined) throw new UsageError(`backfill needs --${name} DATE (YYYY-MM-DD)`);
    if (!isoDate.safeParse(v).success)
      throw new UsageError(`--${name} ${JSON.stringify(v)} is not a calendar date YYYY-MM-DD`);
  }
  if (values.from! > values.to!) throw new UsageError(`--from ${values.from} is after --to ${values.to}`);
  return { from: values.from!, to: values.to! };
}

/** An absolute path to an existing folder; `what` names where it came from (--source, SOURCE_DIR). */
export function existingSourceDir(dir: string, what: string): string {
  const abs = resolve(dir);
  let isDir = false;
  try {
    isDir = statSync(abs).isDirectory();
  } catch {
    throw new UsageError(`${what} ${abs}: no such folder`);
  }
  if (!isDir)
    throw new UsageError(
      `${what} ${abs} is a file; a source is a folder of tables (see "Source layout" in the README)`,
    );
  return abs;
}
