// Fast CSV writing. Lines are concatenated into small (64 KB) strings that are turned into Buffers
// at once (long string ropes are slow to flatten), and written to the file in ~4 MB batches.
import { open } from "node:fs/promises";

const STRING_CHUNK = 1 << 16;
const WRITE_BATCH = 1 << 22;

export class ChunkWriter {
  private buf = "";
  private parts: Buffer[] = [];
  private partsBytes = 0;
  private pending: Promise<unknown> = Promise.resolve();
  private constructor(private readonly fh: Awaited<ReturnType<typeof open>>) {}

  static async create(path: string): Promise<ChunkWriter> {
    return new ChunkWriter(await open(path, "w"));
  }

  /** Appends one line (the newline is added). */
  line(s: string): void {
    this.buf += `${s}\n`;
    if (this.buf.length >= STRING_CHUNK) this.toBuffer();
  }

  private toBuffer(): void {
    const b = Buffer.from(this.buf, "utf8");
    this.buf = "";
    this.parts.push(b);
    this.partsBytes += b.length;
    if (this.partsBytes >= WRITE_BATCH) this.flush();
  }

  private flush(): void {
    const data = Buffer.concat(this.parts);
    this.parts = [];
    this.partsBytes = 0;
    this.pending = this.pending.then(() => this.fh.write(data));
  }

  async close(): Promise<void> {
    if (this.buf.length) this.toBuffer();
    if (this.parts.length) this.flush();
    try {
      await this.pending;
    } finally {
      await this.fh.close();
    }
  }
}

/** RFC 4180 field: quoted only when it holds a comma, quote or newline. */
export function csvField(s: string): string {
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

const TWO = Array.from({ length: 100 }, (_, i) => (i < 10 ? `0${i}` : String(i)));
const FOUR = Array.from({ length: 10000 }, (_, i) => String(i).padStart(4, "0"));

/** A non-negative number with exactly 2 decimals (faster than toFixed, same digits for cent values). */
export function fmt2(x: number): string {
  const c = Math.round(x * 100);
  return `${Math.floor(c / 100)}.${TWO[c % 100]}`;
}

/** A non-negative number with exactly 4 decimals. */
export function fmt4(x: number): string {
  const c = Math.round(x * 10000);
  return `${Math.floor(c / 10000)}.${FOUR[c % 10000]}`;
}

/** A price with 2 decimals, or 4 below one dollar. */
export function fmtPrice(x: number): string {
  return x < 1 ? fmt4(x) : fmt2(x);
}
