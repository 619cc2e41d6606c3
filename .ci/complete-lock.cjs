// Adds lock entries for platform binaries the registry reachable here does not serve (npm 11 then
// leaves them out of package-lock.json and `npm ci` refuses the lock). Run after any `npm install`
// that rewrites the lock: `node .ci/complete-lock.cjs package-lock.json`.
const fs = require("node:fs");
const file = process.argv[2];
const lock = JSON.parse(fs.readFileSync(file, "utf8"));
const add = (name, version, os, cpu, libc) => {
  const key = `node_modules/${name}`;
  if (lock.packages[key]) return;
  lock.packages[key] = {
    version,
    cpu: [cpu],
    license: "MIT",
    optional: true,
    os: [os],
    ...(libc ? { libc: [libc] } : {}),
  };
};
for (const [p, os, cpu, libc] of [
  ["darwin-arm64", "darwin", "arm64"],
  ["darwin-x64", "darwin", "x64"],
  ["linux-arm64", "linux", "arm64", "glibc"],
  ["linux-arm64-musl", "linux", "arm64", "musl"],
  ["win32-x64", "win32", "x64"],
  ["win32-arm64", "win32", "arm64"],
])
  add(`@duckdb/node-bindings-${p}`, "1.5.6-r.1", os, cpu, libc);
for (const [p, os, cpu] of [
  ["darwin-arm64", "darwin", "arm64"],
  ["darwin-x64", "darwin", "x64"],
  ["linux-arm", "linux", "arm"],
  ["linux-arm64", "linux", "arm64"],
  ["linux-x64", "linux", "x64"],
  ["win32-x64", "win32", "x64"],
])
  add(`@msgpackr-extract/msgpackr-extract-${p}`, "3.0.7", os, cpu);
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : 1)),
);
fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
