// Which source `npm start` publishes. With SOURCE_DIR set, that source (when no snapshot of it is
// published yet). Without it, the generated sample, but only on a store that serves nothing or
// the sample already: a store serving another source (after `pipeline run --source X`) is served
// as it is, never replaced implicitly.
import { sourceFingerprint } from "../../pipeline/sources/fingerprint.ts";
import { type Manifest, readManifest, readMeta } from "../../pipeline/store/snapshot/snapshots.ts";
import type { Config } from "../config.ts";

export type StartPlan =
  /** Publish `sourceDir` (null: the sample, generated first when missing) unless already published. */
  | { kind: "publish"; sourceDir: string | null }
  /** Serve the published snapshot of another source; `publishedSource` says which. */
  | { kind: "serve-published"; publishedSource: string };

export function planStart(
  config: Pick<Config, "dataDir" | "sourceDir" | "sampleDir">,
  manifest: Manifest | null = readManifest(config.dataDir),
): StartPlan {
  if (config.sourceDir) return { kind: "publish", sourceDir: config.sourceDir };
  if (!manifest) return { kind: "publish", sourceDir: null };
  let publishedSource: string;
  try {
    publishedSource = readMeta(config.dataDir, manifest.snapshotId).sourceDir;
  } catch {
    publishedSource = manifest.sourceId; // meta.json unreadable: still not ours to replace
  }
  return publishedSource === config.sampleDir
    ? { kind: "publish", sourceDir: null }
    : { kind: "serve-published", publishedSource };
}

/** True when the manifest already serves this exact source (by content fingerprint). */
export const isPublished = (manifest: Manifest | null, sourceDir: string) =>
  manifest?.sourceId === sourceFingerprint(sourceDir);

/** The banner's lines for a store kept on another source. */
export const switchHint = (publishedSource: string) =>
  `serving the published snapshot of ${publishedSource} (SOURCE_DIR is unset, so it is kept)\n` +
  `to serve another source: SOURCE_DIR=DIR npm start, or npm run pipeline -- run --source DIR`;
