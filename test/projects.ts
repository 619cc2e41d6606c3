// Which side of the suite a test file runs on (vitest.config.ts reads this list).
//   fast (`npm test`): every test/**/*.test.ts NOT listed below — the default for a new file.
//   integration (`npm run test:integration`): the files listed below, because they start another
//   process (a CLI, a worker, `npm start`, a cluster, a fork they SIGKILL) or need an outside service
//   (Redis, PostgreSQL, nginx, Chromium, a webhook receiver), or run a whole pipeline at size for a minute.
// A new file that does either goes in this list; test/projects.test.ts fails on a fast file that
// imports one of those helpers, naming the file. A folder ending in "/" lists every file under it.
export const INTEGRATION: readonly string[] = [
  "test/multihost/",
  "test/fuzz/",
  "test/web/",
  "test/deploy/proxy.test.ts",
  // API: a cluster of processes, the contract script and Prism as children, browsers, Redis-backed limits.
  "test/api/abuse.test.ts",
  "test/api/cluster.test.ts",
  "test/api/conformance.test.ts",
  "test/api/docs-browser.test.ts",
  "test/api/graphiql-browser.test.ts",
  "test/api/graphql-cost-redis.test.ts",
  "test/api/http-conventions.test.ts",
  "test/api/prism-proxy.test.ts",
  "test/api/rate-limit-redis.test.ts",
  // Jobs: BullMQ queues and workers on Redis, `npm start` and the CLIs as child processes.
  "test/jobs/append-flow.test.ts",
  "test/jobs/append.test.ts",
  "test/jobs/cli-errors.test.ts",
  "test/jobs/config.test.ts",
  "test/jobs/contracts.test.ts",
  "test/jobs/dashboard.test.ts",
  "test/jobs/faults.test.ts",
  "test/jobs/flow.test.ts",
  "test/jobs/graphql-rebalance.test.ts",
  "test/jobs/npm-signals.test.ts",
  "test/jobs/queue-commands.test.ts",
  "test/jobs/races.test.ts",
  "test/jobs/rebalance-child.test.ts",
  "test/jobs/rebalance-dedupe.test.ts",
  "test/jobs/runner.test.ts",
  "test/jobs/schedule.test.ts",
  "test/jobs/start-banner.test.ts",
  "test/jobs/start-forked-redis.test.ts",
  "test/jobs/start-rebalance.test.ts",
  "test/jobs/start-safety.test.ts",
  "test/jobs/start.test.ts",
  "test/jobs/status-runs.test.ts",
  "test/jobs/terminal-output.test.ts",
  "test/jobs/wait.test.ts",
  "test/jobs/whole-steps.test.ts",
  "test/jobs/worker-outage-log.test.ts",
  // Ratings: generator → pipeline → evidence on two 300 × 8 samples (about a minute of CPU).
  "test/ratings/planted-evidence.test.ts",
  // Store: PostgreSQL catalogs, a publisher process racing another, a full disk under a child.
  "test/store/catalog/conformance.test.ts",
  "test/store/catalog/http.test.ts",
  "test/store/catalog/migrate.test.ts",
  "test/store/catalog/postgres.test.ts",
  "test/store/no-space.test.ts",
  "test/store/publish-race.test.ts",
  // Webhooks: deliveries to a receiver, BullMQ delivery queues, a worker SIGKILLed mid-delivery.
  "test/webhooks/bull.test.ts",
  "test/webhooks/cli-worker.test.ts",
  "test/webhooks/delivery.test.ts",
  "test/webhooks/failed.test.ts",
  "test/webhooks/graphql.test.ts",
  "test/webhooks/inline-run.test.ts",
  "test/webhooks/publish-events.test.ts",
  "test/webhooks/rest.test.ts",
  "test/webhooks/sigkill.test.ts",
];

/** Every test file, as vitest's `include` globs. */
export const ALL_TESTS = ["test/**/*.test.ts"];

/** The list as vitest globs (a folder becomes `folder/**\/*.test.ts`). */
export const INTEGRATION_GLOBS = INTEGRATION.map((p) => (p.endsWith("/") ? `${p}**/*.test.ts` : p));

/**
 * Fast files that do run a child, on purpose: the code checks a developer runs before each commit.
 * test/long-functions.test.ts runs scripts/long-functions.mjs (the TypeScript parser), a second or two.
 */
export const FAST_WITH_A_CHILD: readonly string[] = ["test/long-functions.test.ts"];
