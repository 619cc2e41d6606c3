// A source's identity: the hash of its files' relative paths and the hash of each file's bytes.
// `npm start` runs the pipeline only when no published snapshot came from the same bytes; the
// per-file hashes (recorded with each snapshot) let a nightly run see which files only grew.
import { createHash, type Hash } from "node:crypto";
import { closeSync, openSync, readdirSync, readSync, realpathSync, statSync } from "node:fs";
import { open } from "node:fs/promises";
import { join, relative } from "node:path";

/** One source file as a snapshot records it. */
export interface SourceFile {
  /** Relative to the source folder, `/`-separated. */
  path: string;
  size: number;
  sha256: string;
}

export interface SourceFiles {
  id: string;
  files: SourceFile[];
}

function walk(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((n) => {
      const p = join(dir, n);
      const real = realpathSync(p);
      return statSync(real).isDirectory() ? walk(p) : [p];
    });
}

/** The hash state every CHECKPOINT bytes is kept, so the hash of any prefix costs at most that much reading. */
const CHECKPOINT = 64 << 20;

interface Taken {
  sha256: string;
  checkpoints: { at: number; h: Hash }[];
}

// Hashes already taken in this process, by the file's path, size, modification time and inode: a
// command that enqueues a run and the run itself (or a run and its fundamentals stage) read the
// source's bytes once, not once each.
const taken = new Map<string, Taken>();

/** Bytes of source files this process has hashed (a test's check that a command read none). */
let hashed = 0;
export const hashedBytes = () => hashed;

const signature = (f: string) => {
  const s = statSync(f);
  return { key: JSON.stringify([f, s.size, s.mtimeMs, s.ino]), size: s.size };
};

/** Feeds chunks to a hash, keeping a copy of its state at every multiple of CHECKPOINT. */
function hasher() {
  const h = createHash("sha256");
  const checkpoints: Taken["checkpoints"] = [{ at: 0, h: h.copy() }];
  let at = 0;
  return {
    update(chunk: Buffer) {
      let off = 0;
      hashed += chunk.length;
      while (off < chunk.length) {
        const next = (Math.floor(at / CHECKPOINT) + 1) * CHECKPOINT;
        const n = Math.min(chunk.length - off, next - at);
        h.update(chunk.subarray(off, off + n));
        off += n;
        at += n;
        if (at === next) checkpoints.push({ at, h: h.copy() });
      }
    },
    done: (): Taken => ({ sha256: h.digest("hex"), checkpoints }),
  };
}

/** Reads in 4 MB chunks: a 2 GB price file never sits in memory whole. */
function readSyncChunks(file: string, on: (b: Buffer) => void, start = 0, end = Infinity): void {
  const buf = Buffer.allocUnsafe(1 << 22);
  const fd = openSync(file, "r");
  try {
    for (let pos = start; pos < end; ) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, end - pos), pos);
      if (n <= 0) break;
      on(buf.subarray(0, n));
      pos += n;
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * `readSyncChunks` off the event loop: two 4 MB buffers, one read by the thread pool while the
 * other is hashed. A read stream allocates a new buffer per chunk, whose pages the kernel maps
 * afresh: reading 2 GB that way cost 3.4 CPU s here, of it 1.6 s in the kernel; reused buffers 1.2 s.
 */
async function readChunks(file: string, on: (b: Buffer) => void): Promise<void> {
  const bufs = [Buffer.allocUnsafe(1 << 22), Buffer.allocUnsafe(1 << 22)];
  const fh = await open(file, "r");
  let pending = fh.read(bufs[0], 0, bufs[0].length, 0);
  try {
    let k = 0;
    let pos = 0;
    for (;;) {
      const { bytesRead } = await pending;
      if (bytesRead === 0) break;
      const b = bufs[k];
      pos += bytesRead;
      k ^= 1;
      pending = fh.read(bufs[k], 0, bufs[k].length, pos); // the other buffer, hashed already
      on(b.subarray(0, bytesRead));
    }
  } finally {
    await pending.catch(() => undefined); // no read in flight when the file closes
    await fh.close();
  }
}

function hashSync(f: string): Taken & { size: number } {
  const sig = signature(f);
  let t = taken.get(sig.key);
  if (!t) {
    const h = hasher();
    readSyncChunks(f, (b) => h.update(b));
    t = h.done();
    taken.set(sig.key, t);
  }
  return { ...t, size: sig.size };
}

// Hashes being read asynchronously, by the same key: a second asker (the run's fundamentals stage
// while the run hashes the whole source) waits for that reading instead of reading the file again.
const reading = new Map<string, Promise<Taken>>();

async function hashAsync(f: string): Promise<Taken & { size: number }> {
  const sig = signature(f);
  const t = taken.get(sig.key);
  if (t) return { ...t, size: sig.size };
  let p = reading.get(sig.key);
  if (!p) {
    p = (async () => {
      const h = hasher();
      await readChunks(f, (b) => h.update(b));
      const done = h.done();
      taken.set(sig.key, done);
      return done;
    })();
    reading.set(sig.key, p);
    const key = sig.key;
    p.then(
      () => reading.delete(key),
      () => reading.delete(key),
    );
  }
  return { ...(await p), size: sig.size };
}

/** SHA-256 of the file's first `n` bytes (from the nearest kept state: at most 64 MB read). */
export function prefixSha256(file: string, n: number): string {
  const t = hashSync(file);
  if (n > t.size) throw new RangeError(`${file} has fewer than ${n} bytes`);
  const cp = t.checkpoints.filter((c) => c.at <= n).at(-1)!;
  const h = cp.h.copy();
  readSyncChunks(file, (b) => h.update(b), cp.at, n);
  return h.digest("hex");
}

const relPath = (dir: string, f: string) => relative(dir, f).split("\\").join("/");

/** The fingerprint of hashed files (in `walk` order): what `sourceFingerprint` gives for them. */
export const fingerprintOf = (files: readonly SourceFile[]) => {
  const h = createHash("sha256");
  for (const f of files) h.update(f.path).update("\0").update(f.sha256).update("\n");
  return h.digest("hex").slice(0, 16);
};

/**
 * Every file of the source with its hash, and the source's fingerprint (the files read asynchronously, so a run hashes
 * while DuckDB works).
 */
export async function sourceFilesAsync(dir: string): Promise<SourceFiles> {
  const files: SourceFile[] = [];
  for (const f of walk(dir)) {
    const t = await hashAsync(f);
    files.push({ path: relPath(dir, f), size: t.size, sha256: t.sha256 });
  }
  return { id: fingerprintOf(files), files };
}

/** Every file of the source with its size, unhashed (`sha256` empty): read from the directory only. */
export function sourceSizes(dir: string): SourceFile[] {
  return walk(dir).map((f) => ({ path: relPath(dir, f), size: statSync(f).size, sha256: "" }));
}

/**
 * `sourceFingerprint`, the files read asynchronously (shared with a `sourceFilesAsync` of the same files under way).
 */
export async function sourceFingerprintAsync(dir: string): Promise<string> {
  return (await sourceFilesAsync(dir)).id;
}

/**
 * The source's stamp: its files' paths, sizes and modification times, hashed. It reads only the
 * directory, so a queued run is named by it at once (the same files unchanged: the same job ids, and
 * a second command joins the first run); what a snapshot records is the fingerprint of the bytes,
 * which the run takes while it stages them. Never equal to a fingerprint (it starts with `s`).
 */
export function sourceStamp(dir: string): string {
  const h = createHash("sha256");
  for (const f of walk(dir)) {
    const s = statSync(f);
    h.update(relPath(dir, f)).update("\0").update(`${s.size} ${s.mtimeMs}`).update("\n");
  }
  return `s${h.digest("hex").slice(0, 15)}`;
}

export function sourceFingerprint(dir: string): string {
  return fingerprintOf(walk(dir).map((f) => ({ path: relPath(dir, f), ...pick(hashSync(f)) })));
}

const pick = (t: Taken & { size: number }) => ({ size: t.size, sha256: t.sha256 });
