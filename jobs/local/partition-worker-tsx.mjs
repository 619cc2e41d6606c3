// Worker-thread entry when the pool runs from the TypeScript sources (tests, tsx): registers tsx
// in this thread, then loads the real entry. dist/ starts dist/jobs/local/partition-worker.js directly.
import { register } from "tsx/esm/api";

register();
await import("./partition-worker.ts");
