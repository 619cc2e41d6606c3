// The server's holder over the lazy reader: a publish swaps the reference to a newly opened
// reader; the replaced reader keeps answering the requests that took it, and closes (ending its
// lease, so prune may take its folder) only once nothing has read it for the grace period.
import { expect, it } from "vitest";
import { liveLeases } from "../../pipeline/store/coordination/leases.ts";
import { lazyReader, SnapshotHolder } from "../../pipeline/store/read/holder.ts";
import { generatedStore } from "./published.ts";

it("swaps readers on publish; the old one closes after its reads, then its lease ends", async () => {
  const { dataDir, run } = await generatedStore({ companies: 20, years: 2, seed: 3 });
  const first = await run();
  const holder = new SnapshotHolder(
    dataDir,
    (e) => {
      throw e;
    },
    lazyReader(200),
  );
  const a = (await holder.refresh())!;
  expect(a.id).toBe(first);
  const ticker = a.companies[0].ticker;
  expect((await a.stockReturns(ticker))!.dates.length).toBeGreaterThan(100);
  expect(liveLeases(dataDir, 60_000).has(first)).toBe(true);

  const second = await run();
  expect(second).not.toBe(first);
  const b = (await holder.refresh())!;
  expect([b.id, holder.get()]).toEqual([second, b]);
  // a request that read the old reference just before the swap still gets its answer
  expect((await a.metricRows("stock", ticker))!.length).toBeGreaterThan(10);
  expect(liveLeases(dataDir, 60_000)).toEqual(new Set([first, second]));

  // the old reader closes once unread for its grace (200 ms): wait for its lease to end, not a fixed time
  for (let i = 0; i < 200 && liveLeases(dataDir, 60_000).has(first); i++) await new Promise((r) => setTimeout(r, 25));
  await expect(a.stockReturns(a.companies[1].ticker)).rejects.toThrow(/closed/);
  expect(liveLeases(dataDir, 60_000)).toEqual(new Set([second]));
  expect((await b.stockReturns(ticker))!.dates.length).toBeGreaterThan(100);
  holder.stop();
}, 120_000);
