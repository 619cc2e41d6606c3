// Every DuckDB memory limit of the service, in one place. Beyond its limit a database spills to
// disk (a staging one) or fails the query (an in-memory one), instead of growing the process.
export const DUCK_MEMORY = {
  /** A run's staging database: the default of PIPELINE_DUCKDB_MEMORY (README, "Configuration"). */
  staging: "1024MB",
  /** A flow's universe read and its merge of the partitions' outputs (stages/flow-steps.ts). */
  flowStep: "1GB",
  /** A flow's fundamentals split (jobs/worker/flow-worker.ts). */
  fundamentalsSplit: "512MB",
  /** A partition job's scratch database (store/scratch.ts). */
  scratch: "512MB",
  /** Building a snapshot's read index (store/reader-index.ts). */
  readerIndex: "512MB",
  /** The API's reader of one snapshot (store/snapshot-reader.ts). */
  snapshotReader: "256MB",
  /** A released snapshot reader while it closes: its caches are dropped first (snapshot-reader.ts). */
  releasedReader: "16MB",
} as const;
