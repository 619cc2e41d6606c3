// A nightly append as a data engineer sees it, made from any CSV source: `history/` holds the
// rows of the dated tables (prices, ratings, benchmarks) dated before `from`; `appended/` is the
// same files with the later rows added at their end, as a nightly drop appends lines. Every
// other file is shared (hard links). Used by the append tests and `npm run bench -- append`.

import { once } from "node:events";
import {
  createReadStream,
  createWriteStream,
  linkSync,
  mkdirSync,
  readdirSync,
  statSync,
  type WriteStream,
} from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

const DATED = new Set(["prices.csv", "ratings.csv", "benchmarks.csv"]);

async function write(w: WriteStream, s: string): Promise<void> {
  if (!w.write(s)) await once(w, "drain");
}

const close = (w: WriteStream) =>
  new Promise<void>((resolve, reject) => w.end((e?: Error | null) => (e ? reject(e) : resolve())));

/** Splits one dated CSV (date in the column named `date`) into the history file and the rows to append. */
async function splitFile(from: string, file: string, history: string, appended: string): Promise<number> {
  const h = createWriteStream(history);
  const tail: string[] = [];
  let col = -1;
  // The date is a plain field (no quotes) in every dated table of the contract.
  const dateOf = (line: string) => line.split(",", col + 1)[col];
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    if (col < 0) {
      col = line.split(",").indexOf("date");
      if (col < 0) throw new Error(`${file}: no date column`);
      await write(h, `${line}\n`);
      continue;
    }
    if (dateOf(line) >= from) tail.push(line);
    else await write(h, `${line}\n`);
  }
  await close(h);
  // The appended file: the history's bytes, then the new rows (in date order, as days arrive).
  const a = createWriteStream(appended);
  for await (const chunk of createReadStream(history)) await write(a, chunk as string);
  tail.sort((x, y) => (dateOf(x) < dateOf(y) ? -1 : dateOf(x) > dateOf(y) ? 1 : 0));
  for (const line of tail) await write(a, `${line}\n`);
  await close(a);
  return tail.length;
}

function linkAll(src: string, dst: string, skip: (name: string) => boolean): void {
  mkdirSync(dst, { recursive: true });
  for (const n of readdirSync(src)) {
    if (skip(n)) continue;
    if (statSync(join(src, n)).isDirectory()) linkAll(join(src, n), join(dst, n), () => false);
    else linkSync(join(src, n), join(dst, n));
  }
}

export async function splitAtDate(
  src: string,
  outDir: string,
  from: string,
): Promise<{ history: string; appended: string; rows: Record<string, number> }> {
  const history = join(outDir, "history");
  const appended = join(outDir, "appended");
  for (const d of [history, appended]) linkAll(src, d, (n) => DATED.has(n));
  const rows: Record<string, number> = {};
  for (const n of readdirSync(src))
    if (DATED.has(n)) rows[n] = await splitFile(from, join(src, n), join(history, n), join(appended, n));
  return { history, appended, rows };
}
