// A bench module run directly (`npx tsx bench/x.ts`) runs itself; with --serve it is the server child.
import { readFileSync, realpathSync } from "node:fs";
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

/**
 * The node flags `npm start` runs the server with (package.json's `start`, the one place they are
 * declared): a bench's server process takes them too, so it measures the server as it runs.
 */
export function serverNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    scripts: { start: string };
  };
  return pkg.scripts.start.split(/\s+/).filter((w) => w.startsWith("--"));
}
