// A small LRU of serialized bodies (with what each entry keeps beside its body), bounded by entry
// count and total bytes.
export interface CachedBody {
  etag: string;
  body: Buffer;
}

export class BodyCache<T extends { body: Buffer } = CachedBody> {
  private map = new Map<string, T>();
  private bytes = 0;
  hits = 0;
  misses = 0;
  constructor(
    private readonly maxEntries = 2000,
    private readonly maxBytes = 64 * 1024 * 1024,
  ) {}

  get(key: string): T | undefined {
    const v = this.map.get(key);
    if (v === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    // refresh recency
    this.map.delete(key);
    this.map.set(key, v);
    return v;
  }

  set(key: string, v: T): void {
    if (v.body.length > this.maxBytes / 4) return; // one huge body would evict everything
    const old = this.map.get(key);
    if (old) {
      this.bytes -= old.body.length;
      this.map.delete(key);
    }
    this.map.set(key, v);
    this.bytes += v.body.length;
    while (this.map.size > this.maxEntries || this.bytes > this.maxBytes) {
      const oldest = this.map.keys().next().value as string;
      this.bytes -= this.map.get(oldest)!.body.length;
      this.map.delete(oldest);
    }
  }

  get size() {
    return this.map.size;
  }
}
