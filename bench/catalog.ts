// The catalog on PostgreSQL beside the embedded DuckDB file, in the same run:
//   npx tsx bench/catalog.ts          or          npm run bench -- catalog
// Each store is seeded alike (20 users, 4 watchlists of 10 tickers and 2 portfolios each), then:
// mutations per second, one at a time and 8 in flight, under a write mix (add a ticker, remove it,
// rename a watchlist, update a profile); read latency from the mirror (authenticate, a user's
// watchlists); how soon a second handle sees a write (PostgreSQL: by NOTIFY; embedded: at its next
// refresh(), which servers call each second); and on PostgreSQL, 1 process vs 2 writing at once
// (each a catalog of its own, 8 writes in flight, as two API replicas would); then two API
// processes over HTTP vs one under a write-heavy mix (bench/catalog-http.ts).
// PostgreSQL: the server at 127.0.0.1:5432 (user postgres), a fresh database dropped after.
import { fork } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Catalog, PgCatalog } from "../pipeline/store/catalog/catalog.ts";
import { dropDatabases, freshDatabase } from "../test/store/catalog/pg-fixture.ts";
import { benchCatalogHttp } from "./catalog-http.ts";
import { runIfMain } from "./script.ts";

const USERS = 20;
const OPS = 120;
const SECONDS = 5;
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const ms = (x: number) => x.toFixed(2);

async function seed(c: Catalog): Promise<string> {
  let key = "";
  for (let u = 0; u < USERS; u++) {
    const user = await c.createUser({ email: `u${u}@example.com`, firstName: "U", lastName: `${u}`, phoneNumber: "" });
    const k = await c.createKey(user.id, ["watchlists:read", "watchlists:write"]);
    key ||= k.key;
    for (let w = 0; w < 4; w++)
      await c.createWatchlist(user.id, { name: `w${w}`, tickers: Array.from({ length: 10 }, (_, i) => `T${w}${i}`) });
  }
  return key;
}

/** The i-th write of the mix, on the users' watchlists and profiles. */
function mutation(c: Catalog, i: number): Promise<unknown> {
  const users = c.allUsers();
  const user = users[i % users.length];
  const w = c.watchlistsOf(user.id)[i % 4];
  switch (i % 4) {
    case 0:
      return c.addToWatchlist(w.id, [`X${i}`]);
    case 1:
      return c.removeFromWatchlist(w.id, [`X${i - 1}`]);
    case 2:
      return c.updateWatchlist(w.id, { description: `d${i}` });
    default:
      return c.updateUser(user.id, { firstName: `F${i}` });
  }
}

async function writes(c: Catalog, inFlight: number, ops: number, from = 0) {
  const lat: number[] = [];
  let next = from;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < from + ops) {
        const i = next++;
        const t = performance.now();
        await mutation(c, i);
        lat.push(performance.now() - t);
      }
    }),
  );
  return { perSec: (ops / (performance.now() - t0)) * 1000, p50: pct(lat, 0.5), p95: pct(lat, 0.95) };
}

function readLatency(c: Catalog, key: string) {
  const users = c.allUsers();
  const n = 20_000;
  let t = performance.now();
  for (let i = 0; i < n; i++) c.authenticate(key);
  const auth = ((performance.now() - t) / n) * 1000;
  t = performance.now();
  for (let i = 0; i < n; i++) c.watchlistsOf(users[i % users.length].id);
  const lists = ((performance.now() - t) / n) * 1000;
  return { auth, lists };
}

/** ms from a write through `a` until `b`'s mirror shows it (b refreshed each `pollMs` when given). */
async function visibleAfter(a: Catalog, b: Catalog, i: number, pollMs?: number): Promise<number> {
  const user = a.allUsers()[0];
  const t = performance.now();
  await a.updateUser(user.id, { lastName: `seen ${i}` });
  for (;;) {
    if (b.getUser(user.id)?.lastName === `seen ${i}`) return performance.now() - t;
    if (pollMs !== undefined) await b.refresh();
    await new Promise((r) => setTimeout(r, pollMs ?? 1));
  }
}

async function processes(url: string, n: number): Promise<number> {
  const self = fileURLToPath(import.meta.url);
  const counts = await Promise.all(
    Array.from(
      { length: n },
      (_, k) =>
        new Promise<number>((ok, fail) => {
          const child = fork(self, ["--serve", url, String(k)], { execArgv: ["--import", "tsx"] });
          child.on("message", (m) => ok(Number(m)));
          child.on("error", fail);
        }),
    ),
  );
  return counts.reduce((s, x) => s + x, 0) / SECONDS;
}

/** Child: writes for SECONDS through a catalog of its own, 8 in flight; sends how many it made. */
async function writerChild(): Promise<void> {
  const [url, k] = process.argv.slice(process.argv.indexOf("--serve") + 1);
  const c = await PgCatalog.open(url);
  let done = 0;
  const until = Date.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: 8 }, async (_, j) => {
      for (let i = Number(k) * 1_000_000 + j * 4; Date.now() < until; i += 32) {
        await mutation(c, i);
        done++;
      }
    }),
  );
  process.send?.(done);
  await c.close();
  process.exit(0);
}

export async function benchCatalog(): Promise<void> {
  const path = join(mkdtempSync(join(tmpdir(), "bench-catalog-")), "catalog.duckdb");
  const url = await freshDatabase();
  try {
    const stores: [string, string][] = [
      ["embedded (DuckDB file)", path],
      ["PostgreSQL", url],
    ];
    console.log(`catalog: ${USERS} users × 4 watchlists; load average ${loadavg()[0].toFixed(1)}`);
    console.log("store | writes/s 1 at a time (p50/p95 ms) | writes/s 8 in flight | auth µs | watchlistsOf µs");
    for (const [name, where] of stores) {
      const c = await Catalog.at(where);
      const key = await seed(c);
      const one = await writes(c, 1, OPS);
      const eight = await writes(c, 8, OPS, OPS);
      const r = readLatency(c, key);
      console.log(
        `${name} | ${one.perSec.toFixed(0)} (${ms(one.p50)}/${ms(one.p95)}) | ${eight.perSec.toFixed(0)} ` +
          `(${ms(eight.p50)}/${ms(eight.p95)}) | ${r.auth.toFixed(2)} | ${r.lists.toFixed(2)}`,
      );
      const b = await Catalog.at(where);
      const seen: number[] = [];
      for (let i = 0; i < 20; i++) seen.push(await visibleAfter(c, b, i, c.kind === "embedded" ? 1000 : undefined));
      console.log(
        `  a write seen by a second handle after (p50/max ms): ${ms(pct(seen, 0.5))}/${ms(Math.max(...seen))}` +
          (c.kind === "embedded" ? " (refresh() each second, as servers do)" : " (NOTIFY, no polling)"),
      );
      await b.close();
      await c.close();
    }
    const single = await processes(url, 1);
    const two = await processes(url, 2);
    console.log(`PostgreSQL, write mix for ${SECONDS} s, 8 in flight per process:`);
    console.log(`  1 process: ${single.toFixed(0)} writes/s; 2 processes: ${two.toFixed(0)} writes/s in all`);
    await benchCatalogHttp(await freshDatabase());
  } finally {
    await dropDatabases();
  }
}

await runIfMain(import.meta.url, writerChild, benchCatalog);
