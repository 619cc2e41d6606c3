// A source's identity: the hash of its files' relative paths and bytes. `npm start` runs the
// pipeline only when no published snapshot came from the same bytes.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join, relative } from "node:path";

function walk(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((n) => {
      const p = join(dir, n);
      const real = realpathSync(p);
      return statSync(real).isDirectory() ? walk(p) : [p];
    });
}

export function sourceFingerprint(dir: string): string {
  const h = createHash("sha256");
  for (const f of walk(dir)) {
    h.update(relative(dir, f)).update("\0");
    h.update(readFileSync(f));
  }
  return h.digest("hex").slice(0, 16);
}
