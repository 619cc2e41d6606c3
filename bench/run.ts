// `npm run bench`: every benchmark section, each printing its figures beside a baseline measured
// in the same run. `npm run bench -- api` runs one section; `npm run bench -- tests` times the test files.
const sections: Record<string, () => Promise<void>> = {
  pipeline: async () => (await import("./pipeline.ts")).benchPipeline(),
  analytics: async () => (await import("./analytics.ts")).benchAnalytics(),
  portfolios: async () => (await import("./portfolios.ts")).benchPortfolios(),
  api: async () => (await import("./api.ts")).benchApi(),
  jobs: async () => (await import("./jobs.ts")).benchJobs(),
  graphql: async () => (await import("./graphql.ts")).benchGraphql(),
  "graphql-limits": async () => (await import("./graphql-limits.ts")).benchGraphqlLimits(),
  scale: async () => (await import("./scale.ts")).benchScale(),
  "scale-api": async () => (await import("./scale.ts")).benchScaleApi(),
  append: async () => (await import("./append.ts")).benchAppend(),
  catalog: async () => (await import("./catalog.ts")).benchCatalog(),
  web: async () => (await import("./web.ts")).benchWeb(),
  export: async () => (await import("./export.ts")).benchExport(),
  events: async () => (await import("./events.ts")).benchEvents(),
  "rating-evidence": async () => (await import("./rating-evidence.ts")).benchRatingEvidence(),
  ratings: async () => {
    // the section times the compiled stages (bench/ratings-stages.ts): dist/ rebuilt first when stale
    const { execFileSync } = await import("node:child_process");
    execFileSync(process.execPath, [new URL("../scripts/dist-fresh.mjs", import.meta.url).pathname], {
      stdio: "inherit",
    });
    return (await import("./ratings.ts")).benchRatings();
  },
  tests: async () => (await import("./tests.ts")).benchTests(),
};

const wanted = process.argv.slice(2).filter((a) => a in sections);
// `scale`, `append`, `export` and `ratings` run big universes or whole runs for minutes, and `tests`
// runs the test suite: only when asked for by name.
const byName = new Set(["append", "export", "ratings", "tests"]);
for (const name of wanted.length
  ? wanted
  : Object.keys(sections).filter((n) => !n.startsWith("scale") && !byName.has(n)))
  await sections[name]();
