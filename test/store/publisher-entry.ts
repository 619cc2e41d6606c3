// A separate publishing process for the publish-race test: `tsx publisher-entry.ts DATA_DIR N TAG [hold]`
// publishes N small snapshots as fast as it can and prints their ids; with `hold` it instead
// creates one staging folder, prints READY and waits to be killed (a run that dies mid-way).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { RunLifecycle } from "../../pipeline/run/lifecycle.ts";
import { newSnapshotId } from "../../pipeline/store/snapshot/snapshots.ts";

const [dataDir, n, tag, hold] = process.argv.slice(2);
if (hold) {
  const id = newSnapshotId();
  writeFileSync(join(RunLifecycle.open({ dataDir }, id).out, "table.bin"), Buffer.alloc(1024, 1));
  console.log(`READY ${id}`);
  setInterval(() => undefined, 1000);
} else {
  const ids: string[] = [];
  for (let i = 0; i < Number(n); i++) {
    const id = `${newSnapshotId()}-${tag}${i}`;
    const run = RunLifecycle.open({ dataDir }, id);
    writeFileSync(join(run.out, "table.bin"), Buffer.alloc(64 * 1024, i));
    await run.publish(
      {
        id,
        createdAt: new Date().toISOString(),
        sourceId: tag,
        sourceDir: "/x",
        lastPriceDate: "2024-01-01",
        counts: {},
        timingsMs: {},
      },
      { baseVersion: 0 },
    );
    ids.push(id);
  }
  console.log(JSON.stringify(ids));
}
