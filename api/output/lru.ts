// A bounded LRU of serialized bodies (with what each entry keeps beside its body), on `lru-cache`:
// bounded by entry count and by total bytes (each entry's `body` plus any compressed forms it holds).
import { LRUCache } from "lru-cache";

export interface CachedBody {
  etag: string;
  body: Buffer;
  /** A paged list's whole length (X-Total-Count). */
  total?: number;
}

/** Bytes an entry holds: its body and the compressed forms kept beside it. */
export const entryBytes = (v: { body: Buffer; br?: Buffer; gzip?: Buffer }): number =>
  Math.max(1, v.body.length + (v.br?.length ?? 0) + (v.gzip?.length ?? 0));

export class BodyCache<T extends { body: Buffer; br?: Buffer; gzip?: Buffer } = CachedBody> {
  private lru: LRUCache<string, T>;
  hits = 0;
  misses = 0;
  constructor(maxEntries = 2000, maxBytes = 64 * 1024 * 1024) {
    this.lru = new LRUCache<string, T>({
      max: maxEntries,
      maxSize: maxBytes,
      // one huge body would evict everything: a quarter of the budget at most (larger ones are not kept)
      maxEntrySize: Math.max(1, Math.floor(maxBytes / 4)),
      sizeCalculation: entryBytes,
    });
  }

  get(key: string): T | undefined {
    const v = this.lru.get(key);
    if (v === undefined) this.misses++;
    else this.hits++;
    return v;
  }

  set(key: string, v: T): void {
    this.lru.set(key, v);
  }

  clear(): void {
    this.lru.clear();
  }

  get size(): number {
    return this.lru.size;
  }

  /** Bytes held (bodies and compressed forms). */
  get bytes(): number {
    return this.lru.calculatedSize;
  }
}
