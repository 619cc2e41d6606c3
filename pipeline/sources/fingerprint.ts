// A source's identity: the hash of its files' relative paths and bytes. `npm start` runs the
// pipeline only when no published snapshot came from the same bytes.
import { createHash } from "node:crypto";
import { closeSync, createReadStream, openSync, readdirSync, readSync, realpathSync, statSync } from "node:fs";
import { join, relative } from "node:path";

function walk(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((n) => {
      const p = join(dir, n);
      const real = realpathSync(p);
      return statSync(real).isDirectory() ? walk(p) : [p];
    });
}

// Fingerprints already taken in this process, by the files' paths, sizes and modification times:
// a command that enqueues a run and the run itself (or a run and its fundamentals stage) read the
// source's bytes once, not once each.
const taken = new Map<string, string>();

function signature(dir: string, files: string[]): string {
  return JSON.stringify([dir, ...files.map((f) => {
    const s = statSync(f);
    return [f, s.size, s.mtimeMs, s.ino];
  })]);
}

/** The source's files, the fingerprint already taken of them (if any) and how to record a new one. */
function lookup(dir: string) {
  const files = walk(dir);
  const key = signature(dir, files);
  const h = createHash("sha256");
  return {
    files,
    known: taken.get(key),
    h,
    /** Feeds a file's relative path, then (by `feed`) its bytes. */
    name: (f: string) => h.update(relative(dir, f)).update("\0"),
    done: () => {
      const id = h.digest("hex").slice(0, 16);
      taken.set(key, id);
      return id;
    },
  };
}

export function sourceFingerprint(dir: string): string {
  const l = lookup(dir);
  if (l.known) return l.known;
  for (const f of l.files) updateFromFile(l.name(f), f);
  return l.done();
}

/** `sourceFingerprint` with the files read asynchronously, so a run hashes while DuckDB works. */
export async function sourceFingerprintAsync(dir: string): Promise<string> {
  const l = lookup(dir);
  if (l.known) return l.known;
  for (const f of l.files) {
    l.name(f);
    for await (const chunk of createReadStream(f, { highWaterMark: 1 << 22 })) l.h.update(chunk as Buffer);
  }
  return l.done();
}

/** Hashes a file in 4 MB reads: a 2 GB price file never sits in memory whole. */
function updateFromFile(h: ReturnType<typeof createHash>, file: string): void {
  const buf = Buffer.allocUnsafe(1 << 22);
  const fd = openSync(file, "r");
  try {
    for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0; ) h.update(buf.subarray(0, n));
  } finally {
    closeSync(fd);
  }
}
