import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";
import { ALL_TESTS, INTEGRATION_GLOBS } from "./test/projects.ts";

const require = createRequire(import.meta.url);

// Two projects over test/ (test/projects.ts says which file is which): `fast` is `npm test`,
// `integration` is `npm run test:integration`, and `npm run test:all` (CI) runs both in one
// invocation, fast first, so one JSON report counts every test.
export default defineConfig({
  // One graphql instance: Node resolves `graphql` (no "exports" map) to its CommonJS build for
  // graphql-http and the limit rules, while Vite would pick the ESM build for our sources, and
  // graphql-js refuses a schema built by the other copy. Point our sources at the same file.
  resolve: { alias: [{ find: /^graphql$/, replacement: require.resolve("graphql") }] },
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // DuckDB files and Redis queues are real; keep suites in separate processes.
    pool: "forks",
    projects: [
      {
        extends: true,
        test: {
          name: "fast",
          include: ALL_TESTS,
          exclude: [...configDefaults.exclude, ...INTEGRATION_GLOBS],
          // One Redis probe for the run (test/redis-setup.ts); one published sample store that the
          // read-only suites share (test/sample-setup.ts).
          globalSetup: ["test/redis-setup.ts", "test/sample-setup.ts"],
          // Temp folders and port 0 only: a file per core (vitest's default leaves one core idle).
          maxWorkers: availableParallelism(),
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: INTEGRATION_GLOBS,
          globalSetup: ["test/redis-setup.ts"],
          // Child processes, Redis queues and timing-sensitive faults: one file at a time.
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
