// A dated source table of a snapshot (prices, ratings) is `<table>.parquet` plus, after nightly
// appends, one file per appended batch of days in `<table>.days/`: an append writes only its
// new rows and hard-links the rest, instead of rewriting millions of rows. Readers take the
// union. A full run writes the one file again.
import { existsSync, linkSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Binds } from "../duck/duck.ts";
import { linkTree } from "./link.ts";

export const daysFolder = (table: string) => `${table}.days`;

/** The table's files: the base file, then the appended days in the order they were added. */
export function datedFiles(dir: string, table: string): string[] {
  const days = join(dir, daysFolder(table));
  const more = existsSync(days)
    ? readdirSync(days)
        .filter((f) => f.endsWith(".parquet"))
        .sort()
        .map((f) => join(days, f))
    : [];
  return [join(dir, `${table}.parquet`), ...more];
}

/** The table as one relation, its files bound in `b`. */
export function datedRelation(dir: string, table: string, b: Binds): string {
  const files = datedFiles(dir, table);
  return files.length === 1 ? `read_parquet(${b.v(files[0])})` : `read_parquet(${b.list(files)}, union_by_name = true)`;
}

/** Hard-links the table's files from snapshot `from` into `to`. */
export function linkDated(from: string, to: string, table: string): void {
  mkdirSync(to, { recursive: true });
  linkSync(join(from, `${table}.parquet`), join(to, `${table}.parquet`));
  if (existsSync(join(from, daysFolder(table)))) linkTree(join(from, daysFolder(table)), join(to, daysFolder(table)));
}

/** Where the next appended batch goes (named by its last date, so the files sort by time). */
export function nextDaysFile(dir: string, table: string, lastDate: string): string {
  mkdirSync(join(dir, daysFolder(table)), { recursive: true });
  return join(dir, daysFolder(table), `${lastDate}.parquet`);
}
