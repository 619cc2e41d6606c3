// `npm start`, `npm run pipeline`, `keys` and `generate` run the compiled dist/, so a source edited
// since the last build would otherwise be silently ignored: this rebuilds when dist/ is missing or
// older than any TypeScript source, and does nothing where there are no sources (the Docker image
// ships dist/ only). Plain JS: it must run before any build exists.
//   node scripts/dist-fresh.mjs                     only the check (`npm start`'s pre-script)
//   node scripts/dist-fresh.mjs dist/x.js ARGS…     the check, then x.js in this same process with
//                                                   ARGS, as `node dist/x.js ARGS…` would run it: one
//                                                   Node start (~0.1 s) fewer than a pre-script
// The entry runs in this process, so a signal sent to it is the entry's own. package.json's scripts
// `exec` node: npm forwards SIGTERM and SIGINT to the `sh -c` running a script, and dash would die
// of it leaving node running (test/jobs/npm-signals.test.ts).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const root = join(import.meta.dirname, "..");
const stamp = join(root, "dist/jobs/host/start.js");
const newest = { file: "", mtime: 0 };
function walk(dir) {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== "node_modules" && !e.name.startsWith(".")) walk(p);
    } else if (/\.(ts|css|html)$/.test(e.name)) {
      const m = statSync(p).mtimeMs;
      if (m > newest.mtime) Object.assign(newest, { file: p, mtime: m });
    }
  }
}
for (const d of ["api", "jobs", "pipeline", "data", "web"]) walk(join(root, d));
for (const f of ["tsconfig.json", "tsconfig.build.json"].map((n) => join(root, n))) {
  const m = existsSync(f) ? statSync(f).mtimeMs : 0;
  if (m > newest.mtime) Object.assign(newest, { file: f, mtime: m });
}

// The web bundle is built last: without it the build is incomplete.
const built = existsSync(stamp) && existsSync(join(root, "dist/web/app.js")) ? statSync(stamp).mtimeMs : 0;
if (newest.file && built < newest.mtime) {
  process.stderr.write(
    built
      ? `dist/ is older than ${newest.file.slice(root.length + 1)}: rebuilding (npm run build)\n`
      : "dist/ is missing: building it (npm run build)\n",
  );
  const r = spawnSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
const entry = process.argv[2];
if (entry) {
  // The entry sees the argv `node <entry> ARGS…` gives it.
  const path = resolve(root, entry);
  process.argv.splice(1, 2, path);
  await import(pathToFileURL(path).href);
}
