// One in-process rebalance (jobs/queue/rebalance-requests.ts) in a process of its own, forked by the
// server: a backtest loads the whole price panel (about 1 GB and 10–40 s of CPU at 5,000 × 25),
// which in the serving process held every request for seconds and pushed it past 1 GB.
//   argv: DATA_DIR, the portfolio id[, the BullMQ job it runs for]. The catalog's location comes first over
//   IPC ({catalog}): a PostgreSQL URL may hold a password, which argv would show to anyone running ps.
//   Log lines and the outcome go to the parent over IPC: {log: {level, o, msg}} …, then
//   {ok: true, snapshotId, totalMs} or {ok: false, error, notFound}.
import { PortfolioNotFoundError } from "../../pipeline/stages/rebalance.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { runRebalance } from "./rebalance-run.ts";

const [dataDir, portfolioId, job] = process.argv.slice(2);
const catalogPath = await new Promise<string>((res) =>
  process.once("message", (m: { catalog?: unknown }) => res(String(m?.catalog))),
);
const send = (m: object) => new Promise<void>((res) => process.send!(m, () => res()));
const line = (level: "info" | "warn") => (o: object, msg?: string) => void send({ log: { level, o, msg } });
try {
  const catalog = await Catalog.at(catalogPath);
  const log = { info: line("info"), warn: line("warn") };
  const meta = await runRebalance({ dataDir, catalog, log }, portfolioId, job);
  await send({ ok: true, snapshotId: meta.id, totalMs: meta.timingsMs.total ?? 0 });
} catch (e) {
  await send({ ok: false, error: String((e as Error)?.message ?? e), notFound: e instanceof PortfolioNotFoundError });
}
process.exit(0); // the outcome is sent; nothing else is left to finish
