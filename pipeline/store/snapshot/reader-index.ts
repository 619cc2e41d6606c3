// What the lazy reader (snapshot-reader.ts) needs at open and would otherwise derive from the
// whole snapshot, written once when the snapshot is published: each partitioned table's part
// files with their key ranges (from the Parquet footers' statistics) and every ticker's latest
// rating row. At 5,000 × 25 deriving them cost the reader ~0.65 of its ~1 CPU s of open, on the
// server, while it still served the old snapshot's requests (a swap under load). Snapshots
// published without the index are read as before (the reader derives both itself).
import { existsSync, linkSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { replaceFileAtomic } from "../coordination/atomic-write.ts";
import { Binds, type Conn, columns, openDuck, run } from "../duck/duck.ts";
import { DUCK_MEMORY } from "../duck/duck-memory.ts";
import { latestRatingsSql } from "../read/rating-queries.ts";
import { datedFiles, datedRelation } from "./dated-parts.ts";
import { FINANCIAL_DIRS } from "./financial-tables.ts";

/** Tables stored in ticker-range parts, with their key column. */
export const PARTITIONED: readonly (readonly [string, string])[] = [
  ["stock_metrics", "subject"],
  ["stock_returns", "id"],
  ...FINANCIAL_DIRS.map((t) => [t, "ticker"] as const),
];

export type PartRange = { file: string; min: string; max: string };

/** The index file (part ranges; file names relative to the table's folder). */
export const READER_INDEX = "reader_index.json";
/** Every ticker's latest rating row, the columns of `ratings` (a derived table, see docs/data/snapshot.md). */
export const RATINGS_LATEST = "ratings_latest.parquet";

interface IndexFile {
  version: 1;
  parts: Record<string, { file: string; min: string; max: string }[]>;
}

/**
 * Each part file's [min, max] of `key`, from the Parquet row-group statistics (absolute paths); `names`: only these
 * files of `dir`.
 */
export async function partRanges(c: Conn, dir: string, key: string, names?: string[]): Promise<PartRange[]> {
  const b = new Binds();
  const from = names ? b.list(names.map((n) => join(dir, n))) : b.v(join(dir, "*.parquet"));
  const [files = [], mins = [], maxs = []] = (await columns(
    c,
    `select file_name, min(stats_min_value), max(stats_max_value) from parquet_metadata(${from}) where ` +
      `path_in_schema = ${b.v(key)} group by file_name order by file_name`,
    b.params,
  )) as [string[], string[], string[]];
  return files.map((file, i) => ({ file, min: mins[i], max: maxs[i] })).filter((p) => p.min !== null && p.max !== null);
}

/**
 * Writes a new name, then renames it over the old: a hard link to the base snapshot's file (a
 * rebalance, an append) is replaced, never written through. (A rename between two links of one
 * file does nothing, so the new name is removed after it too.)
 */
function replaceFile(path: string, write: (tmp: string) => Promise<void> | void): Promise<void> {
  return replaceFileAtomic(path, write, { clearFirst: true, unlinkAfter: true });
}

/** Each file's inode: a hard link of the base snapshot's file is the same bytes. */
const inode = (f: string) => statSync(f, { throwIfNoEntry: false })?.ino;
const sameFile = (a: string, b: string) => existsSync(a) && inode(a) === inode(b);

/**
 * Writes the index of the snapshot folder `dir` (a staging folder about to be published). `base`:
 * the published snapshot it was built from, if any: what `dir` holds as hard links of its files (a
 * nightly append's unchanged parts and ratings, every table but one portfolio's in a rebalance)
 * is taken from its index, not read again (at 5,000 × 25 the whole index costs 0.7 CPU s).
 */
export async function writeReaderIndex(dir: string, base?: string | null): Promise<void> {
  const hasRatings = existsSync(datedFiles(dir, "ratings")[0]);
  const tables = PARTITIONED.filter(([t]) => existsSync(join(dir, t)));
  if (!hasRatings && !tables.length) return;
  const known = base ? readPartRanges(base) : null;
  let db: Awaited<ReturnType<typeof openDuck>> | null = null;
  const conn = async () => {
    db ??= await openDuck(":memory:", { threads: "2", memory_limit: DUCK_MEMORY.readerIndex });
    return db.conn;
  };
  try {
    const parts: IndexFile["parts"] = {};
    for (const [t, key] of tables) {
      const files = readdirSync(join(dir, t))
        .filter((f) => f.endsWith(".parquet"))
        .sort();
      const reused = new Map(
        (known?.get(t) ?? [])
          .filter((p) => sameFile(p.file, join(dir, t, basename(p.file))))
          .map((p) => [basename(p.file), p]),
      );
      const fresh = files.filter((f) => !reused.has(f));
      const read = fresh.length ? await partRanges(await conn(), join(dir, t), key, fresh) : [];
      parts[t] = [...reused.values(), ...read]
        .map((p) => ({ ...p, file: basename(p.file) }))
        .sort((a, b) => (a.file < b.file ? -1 : 1));
    }
    await replaceFile(join(dir, READER_INDEX), (tmp) =>
      writeFileSync(tmp, JSON.stringify({ version: 1, parts } satisfies IndexFile)),
    );
    if (hasRatings) await writeLatestRatings(dir, base, conn);
  } finally {
    (db as { close(): void } | null)?.close();
  }
}

/**
 * `ratings_latest.parquet` of `dir`: the base's file, linked, when every ratings file of `dir` is
 * the base's (a rebalance already links it: kept); else read from the ratings.
 */
async function writeLatestRatings(
  dir: string,
  base: string | null | undefined,
  conn: () => Promise<Conn>,
): Promise<void> {
  const out = join(dir, RATINGS_LATEST);
  const ratings = datedFiles(dir, "ratings");
  const from = base ? join(base, RATINGS_LATEST) : null;
  const sameRatings =
    base &&
    from &&
    existsSync(from) &&
    datedFiles(base, "ratings").length === ratings.length &&
    ratings.every((f) => sameFile(join(base, relative(dir, f)), f));
  if (sameRatings && sameFile(out, from)) return;
  // linked unless the base went meanwhile (then read like any other)
  if (
    sameRatings &&
    (await replaceFile(out, (tmp) => linkSync(from, tmp)).then(
      () => true,
      () => false,
    ))
  )
    return;
  const c = await conn();
  const b = new Binds();
  const sql = `${latestRatingsSql(datedRelation(dir, "ratings", b))} order by upper(ticker)`;
  await replaceFile(out, (tmp) =>
    run(c, `copy (${sql}) to ${b.v(tmp)} (format parquet, compression zstd)`, b.params).then(() => undefined),
  );
}

/** The part ranges the index lists for the folder `dir` (absolute paths), or null without an index. */
export function readPartRanges(dir: string): Map<string, PartRange[]> | null {
  const f = join(dir, READER_INDEX);
  if (!existsSync(f)) return null;
  const idx = JSON.parse(readFileSync(f, "utf8")) as IndexFile;
  if (idx.version !== 1) return null;
  return new Map(
    Object.entries(idx.parts).map(([t, ps]) => [t, ps.map((p) => ({ ...p, file: join(dir, t, p.file) }))]),
  );
}
