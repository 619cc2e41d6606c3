// GET /data/v1/export/:table — a whole snapshot table for programs, as an Arrow IPC stream
// (default) or a Parquet file, filtered by tickers, date range and columns. The checks run in the
// REST routes' order (key, rate limit, parameters with the table among them, the table's scopes,
// 503); the rows come from pipeline/store/read/export-reads.ts, streamed with bounded memory. A
// whole-table export is kept as a file while it streams and later sent from it
// (pipeline/store/read/export-cache.ts).
import { type FileHandle, unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { pipeline } from "node:stream/promises";
import type { Request, Response } from "express";
import {
  cacheableExport,
  configureExportCache,
  type ExportCacheKey,
  ExportCacheWriter,
  type ExportFormat,
  openCachedExport,
} from "../../pipeline/store/read/export-cache.ts";
import type { ExportFilter } from "../../pipeline/store/read/export-reads.ts";
import {
  exportBatches,
  exportColumns,
  exportParquet,
  exportParquetAt,
  exportSchema,
  wholeParquetFile,
} from "../../pipeline/store/read/export-reads.ts";
import {
  EXPORT_TABLE_NAMES,
  type ExportTable,
  exportSpec,
  isExportTable,
} from "../../pipeline/store/read/export-tables.ts";
import { requestId } from "../access-log.ts";
import { type Caller, queryKey, requireScopes } from "../auth.ts";
import { InvalidParameter, NotFound, Unavailable } from "../errors.ts";
import { ARROW_STREAM_TYPE, ArrowStreamFramer, batchSchema } from "../output/arrow.ts";
import { etagMatches, requestEtag } from "../output/etag.ts";
import { CACHE_CONTROL, sendNotModified } from "../output/payload.ts";
import type { RateHeaders } from "../rate-limit.ts";
import { ReaderSource } from "../resources/reader-source.ts";
import { type SnapshotRef, snapshotId, sourceOf } from "../resources/snapshot-access.ts";
import { unknownTickers } from "../resources/stocks.ts";
import type { DispatchEntry } from "./dispatch.ts";
import { EXPORT_SCOPES, type ExportParams, exportQuery, type Parsed } from "./export-query.ts";
import { ended, sendFile, sendPieces } from "./export-send.ts";
import { invalidFromZod } from "./params.ts";
import { checkQuery, gated, type RouteEnv } from "./route.ts";

/**
 * Exports streaming at once in this process (EXPORT_MAX_CONCURRENT, set by configureExports): each
 * holds a DuckDB connection, its scan threads' CPU and a socket for as long as the client reads, so
 * beyond the limit a request is refused (503, Retry-After) rather than queued behind them.
 */
const exportSlots = { limit: 4, active: 0 };

/** `cacheMB`: the bound on the cached whole-table export files (EXPORT_CACHE_MB; 0: none kept). */
export function configureExports(opts: { maxConcurrent: number; cacheMB?: number }): void {
  if (!Number.isInteger(opts.maxConcurrent) || opts.maxConcurrent < 1)
    throw new RangeError(`export concurrency must be a whole number >= 1, got ${opts.maxConcurrent}`);
  exportSlots.limit = opts.maxConcurrent;
  if (opts.cacheMB !== undefined) {
    if (!Number.isInteger(opts.cacheMB) || opts.cacheMB < 0)
      throw new RangeError(`export cache size must be a whole number of MB >= 0, got ${opts.cacheMB}`);
    configureExportCache({ limitBytes: opts.cacheMB * 1024 * 1024 });
  }
}

/** Runs `send` in an export slot, refusing (503 naming the limit) when every slot is taken. */
async function inExportSlot(send: () => Promise<void>): Promise<void> {
  if (exportSlots.active >= exportSlots.limit)
    throw new Unavailable(
      `${exportSlots.active} exports are streaming, the most this server runs at once ` +
        `(EXPORT_MAX_CONCURRENT=${exportSlots.limit}); retry when one has finished`,
    );
  exportSlots.active++;
  try {
    await send();
  } finally {
    exportSlots.active--;
  }
}

/** The folder of the served snapshot; exports read a published one (not a test's in-memory snapshot). */
function snapshotFolder(s: SnapshotRef): string {
  const src = sourceOf(s);
  if (src instanceof ReaderSource) return src.reader.dir;
  throw new Unavailable("bulk exports read a published snapshot; this server holds an in-memory one");
}

/** `columns` as given: each a whole column name, or split at commas when the whole is none. */
async function columnsOf(dir: string, table: ExportTable, given: string[] | undefined) {
  if (!given) return undefined;
  const names = new Set((await exportSchema(dir, table)).map((c) => c.name));
  const out = given.flatMap((c) => (names.has(c) ? [c] : c.split(",").map((x) => x.trim())));
  const unknown = out.filter((c) => !names.has(c));
  if (unknown.length)
    throw InvalidParameter.one(
      "columns",
      `${table} has no column ${unknown.map((c) => JSON.stringify(c.slice(0, 60))).join(", ")}; its columns: ` +
        [...names].join(", "),
    );
  return out;
}

async function filterOf(
  snapshot: SnapshotRef,
  table: ExportTable,
  p: ExportParams,
  caller: Caller,
): Promise<ExportFilter> {
  const spec = exportSpec(table);
  if (p.tickers && !spec.ticker) throw InvalidParameter.one("tickers", `${table} has no ticker column`);
  for (const param of ["start_date", "end_date"] as const)
    if (p[param] && !spec.date) throw InvalidParameter.one(param, `${table} has no date column`);
  const columns = await columnsOf(snapshotFolder(snapshot), table, p.columns);
  // after the 400s: an unknown ticker is a 404, as on the per-stock routes, not an empty stream
  const unknown = p.tickers ? await unknownTickers(snapshot, p.tickers) : [];
  if (unknown.length) throw new NotFound(`unknown ticker${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}`);
  return {
    tickers: p.tickers,
    startDate: p.start_date,
    endDate: p.end_date,
    columns,
    ownerId: spec.portfolio ? caller.user.id : undefined,
  };
}

async function serve(
  req: Request,
  res: Response,
  snapshot: SnapshotRef | null,
  caller: Caller,
  parsed: Parsed,
  table: string,
  rate?: RateHeaders,
): Promise<void> {
  // a control character first; then every parameter at once, the path's table (an enum in the OpenAPI
  // document) before the query's
  const badTable = isExportTable(table)
    ? []
    : [
        {
          param: "table",
          message: `no export table ${JSON.stringify(table.slice(0, 60))}; tables: ${EXPORT_TABLE_NAMES.join(", ")}`,
        },
      ];
  if (!parsed.ok && parsed.control) throw invalidFromZod(parsed.issues);
  if (!parsed.ok) throw new InvalidParameter([...badTable, ...invalidFromZod(parsed.issues).details]);
  if (!isExportTable(table)) throw new InvalidParameter(badTable);
  requireScopes(caller, EXPORT_SCOPES[table]);
  if (!snapshot) throw new Unavailable();
  const p = parsed.params;
  const dir = snapshotFolder(snapshot);
  const filter = await filterOf(snapshot, table, p, caller);
  // per snapshot and request (and, for portfolio tables, the user whose portfolios are in it)
  const etag = requestEtag(
    snapshotId(snapshot),
    JSON.stringify([
      "export",
      table,
      p.format,
      filter.tickers ?? null,
      p.start_date ?? null,
      p.end_date ?? null,
      filter.columns ?? null,
      filter.ownerId ?? null,
    ]),
  );
  const id = requestId(res);
  if (etagMatches(req.headers["if-none-match"], etag)) return sendNotModified(res, etag, id, rate);
  const headers: Record<string, string | number> = {
    ETag: etag,
    "Cache-Control": CACHE_CONTROL,
    "X-Request-Id": id,
    ...(res.locals.baseHeaders as Record<string, string> | undefined),
    ...rate,
  };
  const send = (cache: ExportCacheWriter | null) =>
    (p.format === "parquet" ? sendParquet : streamArrow)(req, res, dir, table, filter, headers, cache);
  // a HEAD reads no rows: it takes no slot
  if (req.method === "HEAD") return send(null);
  const key: ExportCacheKey = { snapshotFolder: dir, snapshotId: snapshotId(snapshot), table, format: p.format };
  return cachedOrStreamed(res, key, filter, headers, send);
}

/**
 * A whole-table export from its cached file when there is one, else streamed in an export slot (and
 * kept when it may be). A cached export is a file read (a descriptor, a 1 MB read buffer, a socket):
 * none of what the slots bound (a DuckDB connection, its scan threads, batch memory), so it takes no slot.
 */
async function cachedOrStreamed(
  res: Response,
  key: ExportCacheKey,
  filter: ExportFilter,
  headers: Record<string, string | number>,
  send: (cache: ExportCacheWriter | null) => Promise<void>,
): Promise<void> {
  const cacheable = cacheableExport(key.table, filter);
  const hit = cacheable ? await openCachedExport(key) : null;
  if (hit) return sendCached(res, hit, key.format, key.table, headers);
  return inExportSlot(async () => send(cacheable ? await ExportCacheWriter.start(key) : null));
}

/** Content-Type and Content-Disposition of an export in `format`. */
function formatHeaders(headers: Record<string, string | number>, format: ExportFormat, table: ExportTable) {
  headers["Content-Type"] = format === "parquet" ? "application/vnd.apache.parquet" : ARROW_STREAM_TYPE;
  headers["Content-Disposition"] = `attachment; filename="${table}.${format === "parquet" ? "parquet" : "arrows"}"`;
}

/** The cached file's bytes, with the headers the export had when it was written (Parquet's with its length). */
async function sendCached(
  res: Response,
  hit: { file: FileHandle; size: number },
  format: ExportFormat,
  table: ExportTable,
  headers: Record<string, string | number>,
): Promise<void> {
  formatHeaders(headers, format, table);
  if (format === "parquet") headers["Content-Length"] = hit.size;
  res.writeHead(200, headers);
  // backpressure: the file is read as fast as the socket takes it; closed when done or failed
  await pipeline(hit.file.createReadStream({ highWaterMark: 1 << 20 }), res);
}

async function streamArrow(
  req: Request,
  res: Response,
  dir: string,
  table: ExportTable,
  filter: ExportFilter,
  headers: Record<string, string | number>,
  cache: ExportCacheWriter | null,
): Promise<void> {
  const framer = new ArrowStreamFramer(batchSchema(await exportColumns(dir, table, filter)));
  formatHeaders(headers, "arrow", table);
  if (req.method === "HEAD") {
    res.writeHead(200, headers);
    res.end();
    return;
  }
  const batches = exportBatches(dir, table, filter);
  let whole = false;
  try {
    // the first batch before the status line: a failing read is still an error response
    let next = await batches.next();
    res.writeHead(200, headers);
    await sendPieces(res, cache, framer.start());
    while (!next.done) {
      if (res.destroyed) return;
      // the next batch is read while this one goes out; a full socket buffer waits for the drain
      const pending = batches.next();
      pending.catch(() => undefined); // awaited below; a failure then is the one reported
      // the batch's arrays are reused once its bytes are out
      const batch = next.value;
      await sendPieces(res, cache, framer.batch(batch), () => batch.release());
      next = await pending;
    }
    await sendPieces(res, cache, framer.end());
    res.end();
    whole = await ended(res);
  } finally {
    await batches.return();
    // kept only when every byte went out: a client gone midway leaves no file
    await (whole ? cache?.commit() : cache?.abort());
  }
}

async function sendParquet(
  req: Request,
  res: Response,
  dir: string,
  table: ExportTable,
  filter: ExportFilter,
  headers: Record<string, string | number>,
  cache: ExportCacheWriter | null,
): Promise<void> {
  formatHeaders(headers, "parquet", table);
  if (req.method === "HEAD") {
    res.writeHead(200, headers);
    res.end();
    return;
  }
  // the snapshot's own file when the export is one whole file of it; else DuckDB writes one: into
  // the cache's temporary file when the export is kept, else a temporary file removed after
  const whole = await wholeParquetFile(dir, table, filter);
  const kept = whole ? null : cache;
  let sent = false;
  try {
    if (kept) await exportParquetAt(dir, table, filter, kept.tmp);
    const path = whole ?? kept?.tmp ?? (await exportParquet(dir, table, filter, tmpdir()));
    try {
      await sendFile(res, path, headers);
      sent = true;
    } finally {
      if (!whole && !kept) await unlink(path).catch(() => undefined);
    }
  } finally {
    await (sent ? kept?.commit() : kept?.abort());
    if (cache !== kept) await cache?.abort();
  }
}

/** The tables whose Arrow files a swap builds ahead: the bulk reads issue 33 names, the slowest to stream. */
export const WARM_TABLES: readonly ExportTable[] = ["stock_metrics", "stock_returns"];

/**
 * Builds the cached Arrow files of `tables` for the served snapshot in the background (after a
 * swap), one after another, each in a free export slot only (clients first: with every slot taken
 * the table is left to its first export) and giving the event loop a turn between batches. Never
 * rejects; answers the tables written.
 */
export async function warmExports(snapshot: SnapshotRef | null, tables = WARM_TABLES): Promise<ExportTable[]> {
  const src = snapshot && sourceOf(snapshot);
  if (!snapshot || !(src instanceof ReaderSource)) return [];
  const done: ExportTable[] = [];
  for (const table of tables) {
    const key: ExportCacheKey = {
      snapshotFolder: src.reader.dir,
      snapshotId: snapshotId(snapshot),
      table,
      format: "arrow",
    };
    if (!cacheableExport(table, {}) || exportSlots.active >= exportSlots.limit) continue;
    exportSlots.active++;
    try {
      const hit = await openCachedExport(key);
      if (hit) await hit.file.close();
      const cache = hit ? null : await ExportCacheWriter.start(key);
      if (cache && (await writeArrowFile(src.reader.dir, table, cache))) done.push(table);
    } catch {
      // a failed read leaves the table to its first export, which reports it
    } finally {
      exportSlots.active--;
    }
  }
  return done;
}

/** The whole table's Arrow stream into the cache file, the same bytes an export streams. */
async function writeArrowFile(dir: string, table: ExportTable, cache: ExportCacheWriter): Promise<boolean> {
  let whole = false;
  try {
    const framer = new ArrowStreamFramer(batchSchema(await exportColumns(dir, table, {})));
    await cache.write(framer.start());
    for await (const batch of exportBatches(dir, table, {})) {
      await cache.write(framer.batch(batch));
      batch.release();
      await new Promise((r) => setImmediate(r)); // a turn for the requests
    }
    await cache.write(framer.end());
    whole = true;
  } finally {
    await (whole ? cache.commit() : cache.abort());
  }
  return whole;
}

/** The export route's dispatch entry (registered beside the REST routes). */
export function exportEntries(env: RouteEnv): DispatchEntry[] {
  return [
    {
      path: "/export/:table",
      handle: (req, res, path) => {
        const snapshot = env.snapshot(); // read once: a swap mid-request never mixes two snapshots
        res.locals.route = "export";
        const query = req.query as Record<string, unknown>;
        const r = checkQuery(query, exportQuery);
        const parsed: Parsed = r.success
          ? { ok: true, params: r.data }
          : { ok: false, issues: r.issues, control: r.control };
        return gated(req, res, env, queryKey(query), (caller, rate) =>
          serve(req, res, snapshot, caller, parsed, path.table, rate),
        );
      },
    },
  ];
}
