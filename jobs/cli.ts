// Data engineers' command line: `npm run pipeline -- <command>`.
import { parseArgs } from "node:util";
import { join } from "node:path";
import { Catalog } from "../pipeline/store/catalog/catalog.ts";
import { formatReject, SourceRejectedError } from "../pipeline/sources/report.ts";
import { readManifest, readMeta } from "../pipeline/store/snapshots.ts";
import { loadConfig } from "./config.ts";
import { createLogger } from "./logger.ts";
import { terminalProgress } from "./progress.ts";
import { runPipeline } from "./runner.ts";
import { ensureSampleSource } from "./sample.ts";

const USAGE = `usage: npm run pipeline -- <command>
  run [--source DIR]     ingest DIR (default: SOURCE_DIR, else the generated sample), compute, publish
  status                 the published snapshot, its source and timings`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const config = loadConfig();
  const log = createLogger(config.logLevel === "info" ? "warn" : config.logLevel);
  if (command === "run") {
    const { values } = parseArgs({ args: rest, options: { source: { type: "string" } } });
    const sourceDir = values.source ?? config.sourceDir ?? (await ensureSampleSource(config.sampleDir, log));
    const catalog = await Catalog.open(join(config.dataDir, "catalog.duckdb"));
    const progress = terminalProgress();
    try {
      const { meta } = await runPipeline({ dataDir: config.dataDir, sourceDir, catalog, log, progress: progress.update });
      progress.stop();
      console.log(`published snapshot ${meta.id} from ${sourceDir} in ${meta.timingsMs.total} ms (${meta.counts.companies} companies, ${meta.counts.priceDates} dates)`);
      return 0;
    } catch (e) {
      progress.stop();
      if (e instanceof SourceRejectedError) {
        console.error(`source ${sourceDir} rejected: ${e.total} problem(s); nothing was published.`);
        for (const r of e.rejects.slice(0, 200)) console.error(`  ${formatReject(r)}`);
        if (e.total > 200) console.error(`  … and ${e.total - 200} more`);
        return 2;
      }
      throw e;
    }
  }
  if (command === "status") {
    const m = readManifest(config.dataDir);
    if (!m) {
      console.log(`no snapshot published under ${config.dataDir}`);
      return 1;
    }
    const meta = readMeta(config.dataDir, m.snapshotId);
    console.log(JSON.stringify({ snapshot: m.snapshotId, publishedAt: m.publishedAt, source: meta.sourceDir, sourceId: meta.sourceId, lastPriceDate: meta.lastPriceDate, counts: meta.counts, timingsMs: meta.timingsMs, kept: m.history }, null, 2));
    return 0;
  }
  console.error(USAGE);
  return command ? 64 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  },
);
