import { createRequire } from "node:module";
import { defineConfig } from "vitest/config";

const require = createRequire(import.meta.url);

export default defineConfig({
  // One graphql instance: Node resolves `graphql` (no "exports" map) to its CommonJS build for
  // graphql-http and the limit rules, while Vite would pick the ESM build for our sources, and
  // graphql-js refuses a schema built by the other copy. Point our sources at the same file.
  resolve: { alias: [{ find: /^graphql$/, replacement: require.resolve("graphql") }] },
  test: {
    include: ["test/**/*.test.ts"],
    // One Redis probe for the run: the Redis-backed tests skip, saying why, when none answers.
    globalSetup: ["test/redis-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // DuckDB files and Redis queues are real; keep suites in separate processes.
    pool: "forks",
  },
});
