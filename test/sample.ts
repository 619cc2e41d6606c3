// The sample store published once per run by test/sample-setup.ts, for suites that only read it:
// open readers on it, never rename, delete or add files under it, and keep a catalog you write
// in your own temp folder (other files read the same store, at the same time with several workers).
import { inject } from "vitest";
import type { SampleStore } from "./sample-setup.ts";

/** The shared store: `{ dataDir, id }` of its one published snapshot, and the options it was made with. */
export function sampleStore(): SampleStore {
  const s = inject("sampleStore");
  if (!s) throw new Error("no sample store: test/sample-setup.ts runs as the fast project's globalSetup");
  return s;
}
