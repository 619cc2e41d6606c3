// Runs before `npm start`, `npm run pipeline`, `keys` and `generate` (their pre-scripts): those run
// the compiled dist/, so a source edited since the last build would otherwise be silently ignored.
// Rebuilds when dist/ is missing or older than any TypeScript source; does nothing where there are
// no sources (the Docker image ships dist/ only). Plain JS: it must run before any build exists.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const stamp = join(root, "dist/jobs/start.js");
const newest = { file: "", mtime: 0 };
function walk(dir) {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== "node_modules" && !e.name.startsWith(".")) walk(p);
    } else if (e.name.endsWith(".ts")) {
      const m = statSync(p).mtimeMs;
      if (m > newest.mtime) Object.assign(newest, { file: p, mtime: m });
    }
  }
}
for (const d of ["api", "jobs", "pipeline", "data"]) walk(join(root, d));
for (const f of ["tsconfig.json", "tsconfig.build.json"].map((n) => join(root, n))) {
  const m = existsSync(f) ? statSync(f).mtimeMs : 0;
  if (m > newest.mtime) Object.assign(newest, { file: f, mtime: m });
}

if (!newest.file) process.exit(0);
const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
if (built >= newest.mtime) process.exit(0);
process.stderr.write(built ? `dist/ is older than ${newest.file.slice(root.length + 1)}: rebuilding (npm run build)\n` : "dist/ is missing: building it (npm run build)\n");
const r = spawnSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
process.exit(r.status ?? 1);
