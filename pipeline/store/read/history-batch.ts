// Rating histories read in batches: cold tickers asked for in the same turn of the event loop (a
// GraphQL list of stocks with their histories) are read by one scan. The ratings are stored by
// date, so each history alone reads the whole table (~70 ms of CPU at 5,000 × 25).
import type { LRUCache } from "lru-cache";
import type { RatingRow } from "../../types.ts";

export class HistoryBatcher {
  /** Histories being read, and the batch of cold tickers the next scan will read. */
  private readonly pending = new Map<string, Promise<RatingRow[]>>();
  private batch: { tickers: string[]; done: Promise<Map<string, RatingRow[]>> } | null = null;

  constructor(
    private readonly cache: LRUCache<string, RatingRow[]>,
    private readonly scan: (upperTickers: string[]) => Promise<Map<string, RatingRow[]>>,
  ) {}

  /** An (upper-case) ticker's rating rows, ascending by date. */
  get(upperTicker: string): Promise<RatingRow[]> {
    const h = this.cache.get(upperTicker);
    if (h) return Promise.resolve(h);
    let p = this.pending.get(upperTicker);
    if (!p) {
      const batch = this.openBatch();
      batch.tickers.push(upperTicker);
      p = batch.done.then((m) => {
        const rows = m.get(upperTicker) ?? [];
        this.cache.set(upperTicker, rows);
        return rows;
      });
      const settled = () => this.pending.delete(upperTicker);
      p.then(settled, settled);
      this.pending.set(upperTicker, p);
    }
    return p;
  }

  private openBatch() {
    if (this.batch) return this.batch;
    const batch = { tickers: [] as string[], done: null as unknown as Promise<Map<string, RatingRow[]>> };
    this.batch = batch;
    batch.done = new Promise<void>((r) => setImmediate(r)).then(() => {
      this.batch = null;
      return this.scan(batch.tickers);
    });
    return batch;
  }
}
