// Whether a source only adds rows to the one a snapshot was built from, and which rows those
// are. Each snapshot records its source's files (path, size, sha256); a nightly source that
// appended lines to `prices.csv` (or dropped a new file into a `prices/` folder) and left every
// other file as it was is an append, and its new rows become a small source folder of their own.
import {
  closeSync,
  createReadStream,
  createWriteStream,
  linkSync,
  mkdirSync,
  openSync,
  readSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { z } from "zod";
import { readJsonRecord } from "../store/snapshot/staging-layout.ts";
import {
  fingerprintOf,
  prefixSha256,
  type SourceFile,
  type SourceFiles,
  sourceFilesAsync,
  sourceSizes,
} from "./fingerprint.ts";

/** The tables whose rows are dated: a new trading day adds rows to them. */
export const DATED_TABLES = ["prices", "ratings", "benchmarks"] as const;
export type DatedTable = (typeof DATED_TABLES)[number];

export const SOURCE_FILES = "source_files.json";
const SOURCE_RECORD = z.object({
  files: z.array(z.object({ path: z.string(), size: z.number(), sha256: z.string() })),
});

/** The source files a snapshot was built from (null: not recorded, e.g. a backfill or an older snapshot). */
export function readSourceRecord(snapshot: string): SourceFile[] | null {
  return readJsonRecord(join(snapshot, SOURCE_FILES), SOURCE_RECORD)?.files ?? null;
}

/**
 * Whether the snapshot in folder `snapshot`, published under `sourceId`, may have been built from
 * exactly the source in `sourceDir`, judged without reading the source: false only when the
 * snapshot recorded its source's files under that very fingerprint and this source's files differ
 * from them in name or size, so that their bytes, and the fingerprint, differ too. Anything else
 * is left to the hash. A run that cannot be a republish then starts at once and hashes while it
 * works, instead of hashing first (2 s for 2 GB: a fifth of a nightly append at 5,000 × 25).
 */
export function mayBeBuiltFrom(snapshot: string, sourceId: string, sourceDir: string): boolean {
  const record = readSourceRecord(snapshot);
  if (!record || fingerprintOf(record) !== sourceId) return true;
  const files = sourceSizes(sourceDir);
  return (
    files.length === record.length && files.every((f, i) => f.path === record[i].path && f.size === record[i].size)
  );
}

export function writeSourceRecord(staging: string, files: SourceFile[]): void {
  writeFileSync(join(staging, SOURCE_FILES), JSON.stringify({ files }));
}

export type AppendPlan =
  | {
      kind: "append";
      files: SourceFiles /** Tables with new rows, as files of the delta folder. */;
      grown: DatedTable[];
    }
  | { kind: "full"; files: SourceFiles; reason: string };

const tableOf = (path: string): { table: string; folder: boolean } => {
  const slash = path.indexOf("/");
  if (slash >= 0) return { table: path.slice(0, slash), folder: true };
  return { table: path.replace(/\.(csv|parquet)$/i, ""), folder: false };
};

function endsWithNewline(file: string, size: number): boolean {
  if (size === 0) return false;
  const fd = openSync(file, "r");
  try {
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, size - 1);
    return b[0] === 0x0a;
  } finally {
    closeSync(fd);
  }
}

function firstLine(file: string): string {
  const fd = openSync(file, "r");
  try {
    const b = Buffer.alloc(64 * 1024);
    const n = readSync(fd, b, 0, b.length, 0);
    const s = b.subarray(0, n).toString("utf8");
    const end = s.indexOf("\n");
    return end < 0 ? s : s.slice(0, end + 1);
  } finally {
    closeSync(fd);
  }
}

/**
 * Compares `sourceDir` with the files `published` recorded. An append is: every recorded file
 * still there; companies, fundamentals and portfolios.json byte-identical; each dated table
 * identical, or a CSV file whose recorded bytes are its beginning (and ended with a line), or a
 * folder that gained files; and `prices` among the grown. Anything else is a full run.
 */
export async function planAppend(sourceDir: string, published: SourceFile[] | null): Promise<AppendPlan> {
  const files = await sourceFilesAsync(sourceDir);
  const d = decide(
    sourceDir,
    published,
    files.files,
    (old, f) => f.sha256 === old.sha256,
    (old) => prefixSha256(join(sourceDir, old.path), old.size) === old.sha256,
  );
  return { ...d, files };
}

/**
 * planAppend's answer from the files' sizes alone (no byte read but each grown CSV's last
 * recorded one): what a nightly append starts from while the hashes are taken. It errs only
 * towards an append that planAppend then refuses (a file changed but kept its size, or changed
 * before its end), so the caller must compare the two before it publishes.
 */
export function guessAppend(sourceDir: string, published: SourceFile[] | null): AppendPlan {
  const files = sourceSizes(sourceDir);
  return {
    ...decide(
      sourceDir,
      published,
      files,
      (old, f) => f.size === old.size,
      () => true,
    ),
    files: { id: "", files },
  };
}

type Decision = { kind: "append"; grown: DatedTable[] } | { kind: "full"; reason: string };

function decide(
  sourceDir: string,
  published: SourceFile[] | null,
  files: SourceFile[],
  same: (old: SourceFile, now: SourceFile) => boolean,
  prefixSame: (old: SourceFile) => boolean,
): Decision {
  const full = (reason: string): Decision => ({ kind: "full", reason });
  if (!published) return full("the published snapshot has no record of its source files");
  const now = new Map(files.map((f) => [f.path, f]));
  const was = new Map(published.map((f) => [f.path, f]));
  const grown = new Set<DatedTable>();
  for (const old of published) {
    const f = now.get(old.path);
    if (!f) return full(`${old.path} is gone`);
    if (same(old, f)) continue;
    const { table, folder } = tableOf(old.path);
    if (!(DATED_TABLES as readonly string[]).includes(table)) return full(`${old.path} changed`);
    if (folder || !old.path.toLowerCase().endsWith(".csv"))
      return full(`${old.path} changed (only CSV files grow by lines)`);
    if (f.size <= old.size || !prefixSame(old)) return full(`${old.path} changed, not only at its end`);
    if (!endsWithNewline(join(sourceDir, old.path), old.size))
      return full(`${old.path} did not end with a line break where the new rows begin`);
    grown.add(table as DatedTable);
  }
  for (const f of files) {
    if (was.has(f.path)) continue;
    const { table, folder } = tableOf(f.path);
    // A new file in a dated table's folder the snapshot already read as a folder.
    if (
      !folder ||
      !(DATED_TABLES as readonly string[]).includes(table) ||
      !published.some((p) => p.path.startsWith(`${table}/`))
    )
      return full(`${f.path} is new`);
    grown.add(table as DatedTable);
  }
  if (!grown.has("prices")) return full(grown.size ? "only ratings or index series grew" : "the source is unchanged");
  return { kind: "append", grown: DATED_TABLES.filter((t) => grown.has(t)) };
}

/**
 * The new rows of a planned append as a source folder `deltaDir`: the grown tables only (a CSV's
 * header line followed by its appended bytes, or the folder's new files), plus companies and
 * portfolios.json as they are (links). Tables left out come from the published snapshot.
 */
export async function writeDeltaSource(
  sourceDir: string,
  published: SourceFile[],
  plan: Extract<AppendPlan, { kind: "append" }>,
  deltaDir: string,
): Promise<void> {
  mkdirSync(deltaDir, { recursive: true });
  const was = new Map(published.map((f) => [f.path, f]));
  const link = (rel: string) => {
    const to = join(deltaDir, rel);
    mkdirSync(join(to, ".."), { recursive: true });
    try {
      linkSync(join(sourceDir, rel), to);
    } catch {
      symlinkSync(join(sourceDir, rel), to);
    }
  };
  for (const f of plan.files.files) {
    const { table, folder } = tableOf(f.path);
    if (table === "companies" || f.path === "portfolios.json") link(f.path);
    if (!plan.grown.includes(table as DatedTable)) continue;
    const old = was.get(f.path);
    if (folder) {
      if (!old) link(f.path);
      continue;
    }
    const to = join(deltaDir, f.path);
    writeFileSync(to, firstLine(join(sourceDir, f.path)));
    await pipeline(
      createReadStream(join(sourceDir, f.path), { start: old!.size }),
      createWriteStream(to, { flags: "a" }),
    );
  }
}
