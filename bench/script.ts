// A bench module run directly (`npx tsx bench/x.ts`) runs itself; with --serve it is the server child.
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";

export async function runIfMain(
  moduleUrl: string,
  serve: () => Promise<void>,
  bench: () => Promise<void>,
): Promise<void> {
  const self = fileURLToPath(moduleUrl);
  const invoked = process.argv[1] ? realpathSync(process.argv[1]) : "";
  if (invoked !== self && invoked !== self.replace(/\.ts$/, "")) return;
  if (process.argv.includes("--serve")) await serve();
  else await bench();
}
