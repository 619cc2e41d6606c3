// A separate publishing process for the publish-race test: `tsx publisher-entry.ts DATA_DIR N TAG [hold]`
// publishes N small snapshots as fast as it can and prints their ids; with `hold` it instead
// creates one staging folder, prints READY and waits to be killed (a run that dies mid-way).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { newSnapshotId, publishSnapshot, stagingDir } from "../../pipeline/store/snapshot/snapshots.ts";

const [dataDir, n, tag, hold] = process.argv.slice(2);
if (hold) {
  const id = newSnapshotId();
  writeFileSync(join(stagingDir(dataDir, id), "table.bin"), Buffer.alloc(1024, 1));
  console.log(`READY ${id}`);
  setInterval(() => undefined, 1000);
} else {
  const ids: string[] = [];
  for (let i = 0; i < Number(n); i++) {
    const id = `${newSnapshotId()}-${tag}${i}`;
    const staging = stagingDir(dataDir, id);
    writeFileSync(join(staging, "table.bin"), Buffer.alloc(64 * 1024, i));
    await publishSnapshot(dataDir, staging, {
      id,
      createdAt: new Date().toISOString(),
      sourceId: tag,
      sourceDir: "/x",
      lastPriceDate: "2024-01-01",
      counts: {},
      timingsMs: {},
    });
    ids.push(id);
  }
  console.log(JSON.stringify(ids));
}
