// `npm run bench -- events`: one night's webhook events at 5,000 tickers with 10,000 users each
// holding a 20-stock watchlist (and a rating.changed webhook), and delivery throughput to a local
// receiver. Baselines from the same run: reading both snapshots' latest ratings in DuckDB (the
// floor of any comparison), and a bare loop of signed POSTs at the same concurrency (no guard, no
// queue, no store).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addDeliveries, webhookQueue, webhookWorker } from "../jobs/webhooks/bull.ts";
import { deliveryDeps } from "../jobs/webhooks/deps.ts";
import { LocalDeliveryQueue } from "../jobs/webhooks/local-queue.ts";
import { DELIVERY_DEFAULTS } from "../jobs/webhooks/settings.ts";
import { signedHeaders } from "../jobs/webhooks/sign.ts";
import { eventsOfPublish, type WatchedTicker } from "../pipeline/events/index.ts";
import { openDuck, rows } from "../pipeline/store/duck/duck.ts";
import { EmbeddedWebhookStore } from "../pipeline/store/webhooks/embedded.ts";
import { fileTx } from "../pipeline/store/webhooks/file-tx.ts";

const REDIS = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const TICKERS = 5000;
const USERS = 10_000;
const PER_LIST = 20;

const RATINGS =
  "select 'T' || lpad(i::varchar, 5, '0') ticker, $day::date date, " +
  "round(1 + 9 * (hash(i, $seed) % 1000)::double / 1000, 2) total_rating, 3.0 return_rating, 3.0 growth_rating, " +
  "3.0 risk_rating, 3.0 valuation_rating, 3.0 technical_rating, 3.0 macro_rating from range($n) t(i)";

async function writeSnapshot(dir: string, id: string, seed: number, day: string) {
  mkdirSync(dir, { recursive: true });
  const db = await openDuck();
  const out = (name: string, sql: string, p: Record<string, string | number>) =>
    db.conn.run(`copy (${sql}) to '${join(dir, `${name}.parquet`)}' (format parquet)`, p);
  // seed 1 and 2 give every ticker another total: 5,000 rating.changed events, the worst night
  await out("ratings_latest", RATINGS, { n: TICKERS, seed, day });
  await out(
    "holdings",
    "select 'P' || (i % 1000) portfolio_id, 'rebalance' kind, $day::date date, " +
      "'T' || lpad(((i * 7 + $seed) % $n)::varchar, 5, '0') ticker, 100.0 price, 5.0 total_rating " +
      "from range(20000) t(i)",
    { n: TICKERS, seed, day },
  );
  await out("portfolios", "select 'P' || i id, 'u' || i owner_id from range($k) t(i)", { k: 1000 });
  await out(
    "companies",
    "select i::varchar id, 'T' || lpad(i::varchar, 5, '0') ticker, 'Co ' || i as name from range($n) t(i)",
    {
      n: TICKERS,
    },
  );
  db.close();
  writeFileSync(
    join(dir, "meta.json"),
    JSON.stringify({
      id,
      createdAt: `${day}T02:00:00.000Z`,
      sourceId: "bench",
      sourceDir: "",
      lastPriceDate: day,
      counts: {},
      timingsMs: {},
    }),
  );
}

function peakRss(): { stop(): number } {
  let peak = process.memoryUsage().rss;
  const t = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  return {
    stop() {
      clearInterval(t);
      return Math.max(peak, process.memoryUsage().rss);
    },
  };
}

const mb = (b: number) => `${Math.round(b / 1024 / 1024)} MB`;
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function benchCompute(root: string) {
  const prev = join(root, "prev");
  const cur = join(root, "cur");
  await writeSnapshot(prev, "prev", 1, "2024-01-31");
  await writeSnapshot(cur, "cur", 2, "2024-02-29");
  const store = await EmbeddedWebhookStore.open(join(root, "webhooks.duckdb"));
  await fileTx(store.path, (c) =>
    c.run(
      "insert into webhooks select 'wh_' || i, 'u' || i, 'https://hooks.example.com/' || i, '', " +
        "['rating.changed', 'portfolio.rebalanced', 'snapshot.published'], '{\"tradeValue\":10000}', " +
        "'whsec_x', true, null, 0, now(), now() from range($n) t(i)",
      { n: USERS },
    ),
  );
  const watches: WatchedTicker[] = [];
  for (let u = 0; u < USERS; u++)
    for (let k = 0; k < PER_LIST; k++)
      watches.push({
        userId: `u${u}`,
        watchlistId: `w${u}`,
        ticker: `T${String((u * 31 + k * 97) % TICKERS).padStart(5, "0")}`,
      });

  const base0 = performance.now();
  const db = await openDuck();
  const n = await rows(db.conn, "select count(*) n from read_parquet($1) a join read_parquet($2) b using (ticker)", [
    join(cur, "ratings_latest.parquet"),
    join(prev, "ratings_latest.parquet"),
  ]);
  db.close();
  const baseMs = performance.now() - base0;

  const rssBefore = process.memoryUsage().rss;
  const mem = peakRss();
  const t0 = performance.now();
  const r = await eventsOfPublish({ currentDir: cur, previousDir: prev }, store, async (ids) => {
    const want = new Set(ids);
    return watches.filter((w) => want.has(w.userId));
  });
  const ms = performance.now() - t0;
  const peak = mem.stop();
  console.log(
    `events: ${TICKERS} tickers, ${USERS} users × ${PER_LIST}-stock watchlists: ${r.events.length} events, ` +
      `${r.deliveries.length} deliveries in ${s(ms)} (target < 5 s); peak RSS ${mb(peak)} (${mb(peak - rssBefore)} ` +
      `above the ${mb(rssBefore)} before; target < 500 MB) — baseline: both ratings_latest joined in DuckDB ` +
      `(${Number(n[0].n)} rows) ${s(baseMs)}`,
  );
  return r.deliveries.length;
}

export async function benchDelivery(root: string) {
  const N = 5000;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(204).end());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const settings = { ...DELIVERY_DEFAULTS, allowHttp: true, allowPrivate: true };
  const secret = `whsec_${Buffer.alloc(32, 1).toString("base64")}`;
  const body = JSON.stringify({ id: "evt", type: "rating.changed", data: { ticker: "T00001", watchlists: ["1"] } });

  // baseline: N signed POSTs, `concurrency` in flight, on a keep-alive agent
  const agent = new Agent({ keepAlive: true, maxSockets: settings.concurrency });
  const post = (i: number) =>
    new Promise<void>((done) => {
      const req = request(url, { method: "POST", agent, headers: signedHeaders(secret, `evt_${i}`, body) }, (res) => {
        res.resume();
        res.on("end", done);
      });
      req.end(body);
    });
  const b0 = performance.now();
  let next = 0;
  await Promise.all(
    [...Array(settings.concurrency)].map(async () => {
      while (next < N) await post(next++);
    }),
  );
  const bareMs = performance.now() - b0;

  // the queue: 50 webhooks at the local receiver, N deliveries, recorded in the store
  const store = await EmbeddedWebhookStore.open(join(root, "deliver.duckdb"));
  const hooks = await Promise.all(
    [...Array(50)].map((_, i) => store.create(`u${i}`, { url, eventTypes: ["rating.changed"] })),
  );
  const deps = deliveryDeps(store, settings);
  const q = await LocalDeliveryQueue.open(join(root, "queue.jsonl"), deps);
  const t0 = performance.now();
  await q.add(
    [...Array(N)].map((_, i) => ({
      webhookId: hooks[i % 50].webhook.id,
      eventId: `evt_${i}`,
      eventType: "rating.changed",
      body,
    })),
  );
  await q.idle();
  await deps.recorder.flush();
  const ms = performance.now() - t0;
  await q.close();
  const bull = await bullDelivery(
    store,
    hooks.map((h) => h.webhook.id),
    settings,
    N,
    body,
  );
  server.closeAllConnections();
  server.close();
  agent.destroy();
  console.log(
    `delivery: ${N} signed deliveries to a local receiver, in-process queue (concurrency ${settings.concurrency}, ` +
      `${settings.perWebhook} per webhook, outcomes recorded): ${Math.round(N / (ms / 1000))}/s — baseline: a bare ` +
      `loop of signed POSTs at the same concurrency ${Math.round(N / (bareMs / 1000))}/s; ${bull}`,
  );
}

/** N deliveries through BullMQ's `webhooks` queue (added, then taken by two workers); its figure as text. */
async function bullDelivery(
  store: EmbeddedWebhookStore,
  hookIds: string[],
  settings: typeof DELIVERY_DEFAULTS,
  n: number,
  body: string,
): Promise<string> {
  const prefix = `bench-events-${process.pid}`;
  const queue = webhookQueue(REDIS, prefix);
  const ready = await Promise.race([
    queue.waitUntilReady().then(() => true),
    new Promise<boolean>((r) => setTimeout(() => r(false), 3000)),
  ]);
  if (!ready) {
    await queue.close();
    return `two BullMQ workers: not measured (no Redis at ${REDIS})`;
  }
  const deps = [deliveryDeps(store, settings), deliveryDeps(store, settings)];
  const workers = deps.map((d) => webhookWorker(REDIS, d, prefix));
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  const t0 = performance.now();
  try {
    await addDeliveries(
      queue,
      [...Array(n)].map((_, i) => ({
        webhookId: hookIds[i % hookIds.length],
        eventId: `evt_b${i}`,
        eventType: "rating.changed",
        body,
      })),
      settings.attempts,
    );
    while ((await queue.getJobCounts("completed")).completed < n) await new Promise((r) => setTimeout(r, 50));
    await Promise.all(deps.map((d) => d.recorder.flush()));
    const ms = performance.now() - t0;
    return (
      `two BullMQ workers (each concurrency ${settings.concurrency}, ${settings.perWebhook} per webhook), ` +
      `added and delivered: ${Math.round(n / (ms / 1000))}/s (target >= 500/s)`
    );
  } finally {
    await Promise.all(workers.map((w) => w.close()));
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
  }
}

export async function benchEvents(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "bench-events-"));
  try {
    await benchCompute(root);
    await benchDelivery(root);
  } finally {
    rmSync(root, { recursive: true, force: true, maxRetries: 5 });
  }
}
