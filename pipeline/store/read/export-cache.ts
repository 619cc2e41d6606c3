// Whole-table exports kept as files, per snapshot: the first export of a table with no filter, in
// a format, is written to a temporary file beside the bytes sent, renamed into place once the
// response completed whole; later ones read the file. A snapshot never changes, so a file stays
// right for as long as its snapshot is served. The folder (staging-layout.ts exportCacheFile) is
// outside the snapshot; the server drops other snapshots' files on a swap, prune drops those of
// pruned snapshots, and the total is bounded (EXPORT_CACHE_MB; the oldest files go first).
import { randomBytes } from "node:crypto";
import { type FileHandle, mkdir, open, readdir, rename, rm, stat, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { dataDirOfSnapshot, exportCacheDir, exportCacheFile } from "../snapshot/staging-layout.ts";
import type { ExportFilter } from "./export-reads.ts";
import { type ExportTable, exportSpec } from "./export-tables.ts";

export type ExportFormat = "arrow" | "parquet";

const MB = 1024 * 1024;
/** The bound on the files' total (configureExportCache); 0: nothing is cached. */
const settings = { limitBytes: 4096 * MB };

/** The bound on the cached files' total, in bytes (EXPORT_CACHE_MB × 2^20); 0: nothing is cached. */
export function configureExportCache(opts: { limitBytes: number }): void {
  if (!Number.isSafeInteger(opts.limitBytes) || opts.limitBytes < 0)
    throw new RangeError(`export cache size must be a whole number of bytes >= 0, got ${opts.limitBytes}`);
  settings.limitBytes = opts.limitBytes;
}

/** A temporary file not written for this long belongs to a process that died mid-export. */
const STALE_TMP_MS = 10 * 60_000;
const TMP = ".tmp-";

/** One cached export: a whole table of the snapshot in `snapshotFolder`, in one format. */
export interface ExportCacheKey {
  snapshotFolder: string;
  snapshotId: string;
  table: ExportTable;
  format: ExportFormat;
}

const pathOf = (k: ExportCacheKey) =>
  exportCacheFile(dataDirOfSnapshot(k.snapshotFolder), k.snapshotId, `${k.table}.${k.format}`);

/**
 * Whether the export is the same bytes for every caller: the whole table, every column (no filter),
 * and not a portfolio table (those hold the caller's own portfolios). Nothing is cached when the
 * bound is 0.
 */
export function cacheableExport(table: ExportTable, f: ExportFilter): boolean {
  if (settings.limitBytes === 0 || exportSpec(table).portfolio) return false;
  return !f.tickers && f.startDate === undefined && f.endDate === undefined && !f.columns;
}

/** The cached file, open (a file evicted or dropped meanwhile stays readable), or null. */
export async function openCachedExport(k: ExportCacheKey): Promise<{ file: FileHandle; size: number } | null> {
  let file: FileHandle;
  try {
    file = await open(pathOf(k));
  } catch {
    return null;
  }
  try {
    return { file, size: (await file.stat()).size };
  } catch {
    await file.close();
    return null;
  }
}

/**
 * The bytes of one export on their way into the cache: written (`write`, or by DuckDB at `tmp`) to
 * a temporary file of a name no other writer has, then `commit` renames it into place, or `abort`
 * removes it. A write that fails (a full disk) or goes over the bound gives up quietly: the export
 * is sent all the same, only not kept. Two first exports of the same table each write their own
 * file; the later rename replaces the earlier whole file with another whole one.
 */
export class ExportCacheWriter {
  private file: Promise<FileHandle> | null = null;
  private bytes = 0;
  private failed = false;
  private ended = false;
  private queue: Promise<void> = Promise.resolve();

  private constructor(
    private readonly dataDir: string,
    readonly path: string,
    readonly tmp: string,
  ) {}

  /** A writer for the export, its folder made; null when nothing may be cached. */
  static async start(k: ExportCacheKey): Promise<ExportCacheWriter | null> {
    if (settings.limitBytes === 0) return null;
    const path = pathOf(k);
    const tmp = `${path}${TMP}${process.pid}-${randomBytes(6).toString("hex")}`;
    try {
      await mkdir(dirname(path), { recursive: true });
    } catch {
      return null;
    }
    return new ExportCacheWriter(dataDirOfSnapshot(k.snapshotFolder), path, tmp);
  }

  /**
   * Appends the pieces after those given before (writes run one at a time, in order); resolves once
   * they are written (or the writer gave up), never rejects.
   */
  write(pieces: readonly Uint8Array[]): Promise<void> {
    this.queue = this.queue.then(() => this.append(pieces));
    return this.queue;
  }

  private async append(pieces: readonly Uint8Array[]): Promise<void> {
    if (this.failed || this.ended) return;
    const size = pieces.reduce((n, p) => n + p.byteLength, 0);
    this.bytes += size;
    if (this.bytes > settings.limitBytes) return this.giveUp();
    try {
      this.file ??= open(this.tmp, "wx");
      const { bytesWritten } = await (await this.file).writev(pieces as Uint8Array[]);
      if (bytesWritten !== size) throw new Error(`short write: ${bytesWritten} of ${size} bytes`);
    } catch {
      await this.giveUp();
    }
  }

  private async giveUp(): Promise<void> {
    if (this.failed) return;
    this.failed = true;
    await this.close();
    await unlink(this.tmp).catch(() => undefined);
  }

  private async close(): Promise<void> {
    const f = this.file;
    this.file = null;
    if (f) await f.then((h) => h.close()).catch(() => undefined);
  }

  /** The export completed whole: the file goes into place (unless the writer gave up), then the bound is kept. */
  async commit(): Promise<void> {
    await this.queue;
    if (this.ended) return;
    this.ended = true;
    if (this.failed) return;
    await this.close();
    try {
      const { size } = await stat(this.tmp);
      if (size > settings.limitBytes) throw new Error("over the bound");
      await rename(this.tmp, this.path);
    } catch {
      // dropped by a swap meanwhile, or too large to keep
      await unlink(this.tmp).catch(() => undefined);
      return;
    }
    await evict(this.dataDir);
  }

  /** The export did not complete (the client went away, a read failed): nothing is kept. */
  async abort(): Promise<void> {
    await this.queue;
    if (this.ended) return;
    this.ended = true;
    await this.close();
    await unlink(this.tmp).catch(() => undefined);
  }
}

/** The finished files of the cache (and stale temporary ones, removed here), oldest first. */
async function cacheFiles(dataDir: string): Promise<{ path: string; size: number; mtimeMs: number }[]> {
  const root = exportCacheDir(dataDir);
  const out: { path: string; size: number; mtimeMs: number }[] = [];
  for (const id of await readdir(root).catch(() => [] as string[]))
    for (const name of await readdir(join(root, id)).catch(() => [] as string[])) {
      const path = join(root, id, name);
      const st = await stat(path).catch(() => null);
      if (!st?.isFile()) continue;
      if (!name.includes(TMP)) out.push({ path, size: st.size, mtimeMs: st.mtimeMs });
      else if (Date.now() - st.mtimeMs > STALE_TMP_MS) await unlink(path).catch(() => undefined);
    }
  return out.sort((a, b) => a.mtimeMs - b.mtimeMs);
}

/** Removes the oldest files until the total is within the bound; answers the paths removed. */
export async function evict(dataDir: string): Promise<string[]> {
  const files = await cacheFiles(dataDir);
  let total = files.reduce((n, f) => n + f.size, 0);
  const removed: string[] = [];
  for (const f of files) {
    if (total <= settings.limitBytes) break;
    await unlink(f.path).catch(() => undefined);
    total -= f.size;
    removed.push(f.path);
  }
  return removed;
}

/**
 * Removes the cached exports of every snapshot but `servedId` (a server's swap: the others are no
 * longer served by it). A reader of a removed file keeps its open file; never rejects.
 */
export async function dropExportCaches(dataDir: string, servedId: string): Promise<void> {
  const root = exportCacheDir(dataDir);
  for (const id of await readdir(root).catch(() => [] as string[]))
    if (id !== servedId) await rm(join(root, id), { recursive: true, force: true }).catch(() => undefined);
}
