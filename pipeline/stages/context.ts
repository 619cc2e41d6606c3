// What every stage receives: the staging DuckDB connection, the folder it writes Parquet into,
// the catalog, a logger and a progress callback. Stages know nothing of queues or HTTP.
import type { Catalog } from "../store/catalog/catalog.ts";
import type { Conn } from "../store/duck/duck.ts";
import type { PartitionJob } from "./partition-jobs.ts";

export interface Log {
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
}

export interface StageContext {
  conn: Conn;
  /**
   * Another connection to the staging database, for work that runs while `conn` goes on (one
   * query runs per connection at a time). Absent: everything runs on `conn`, one after another.
   */
  connect?: () => Promise<Conn>;
  /** Snapshot staging folder: every table is written here as `<table>.parquet`. */
  out: string;
  catalog: Catalog;
  log: Log;
  progress?: (stage: string, done: number, total: number) => void;
  /** The published snapshot's folder, if any: unchanged inputs reuse its tables (hard links). */
  published?: string;
  /** Companies per partition job (default TICKERS_PER_PARTITION). */
  tickersPerPartition?: number;
  /** Partition jobs that run at once: a stage makes a multiple of it, so no worker idles at the end. */
  parallelism?: number;
  /**
   * Runs one stage's partition jobs and returns their results in order: inline, on worker
   * threads, or as queue jobs; the stage neither knows nor cares (default: inline, in order).
   */
  runPartitions?: <R>(jobs: PartitionJob[], onDone?: (done: number) => void) => Promise<R[]>;
}
