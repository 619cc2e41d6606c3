// The web app's bundle: web/src/main.ts (and the CSS it imports) into dist/web/ with esbuild,
// plus web/index.html. Run by `npm run build`, so `npm ci` (prepare) and `npm start` on a fresh
// clone (scripts/dist-fresh.mjs) both produce it. Plain JS: it runs before any build exists.
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

const root = join(import.meta.dirname, "..");
const out = join(root, "dist/web");
mkdirSync(out, { recursive: true });
await build({
  entryPoints: { app: join(root, "web/src/main.ts") },
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2022",
  outdir: out,
  sourcemap: "linked",
  logLevel: "warning",
  legalComments: "none",
});
copyFileSync(join(root, "web/index.html"), join(out, "index.html"));
