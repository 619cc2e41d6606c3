// A source's identity: the hash of its files' relative paths and the hash of each file's bytes.
// `npm start` runs the pipeline only when no published snapshot came from the same bytes; the
// per-file hashes (recorded with each snapshot) let a nightly run see which files only grew.
import { createHash, type Hash } from "node:crypto";
import { closeSync, createReadStream, openSync, readdirSync, readSync, realpathSync, statSync } from "node:fs";
import { join, relative } from "node:path";

/** One source file as a snapshot records it. */
export interface SourceFile {
  /** Relative to the source folder, `/`-separated. */
  path: string;
  size: number;
  sha256: string;
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

// Hashes already taken in this process, by the file's path, size, modification time and inode: a
// command that enqueues a run and the run itself (or a run and its fundamentals stage) read the
// source's bytes once, not once each.
const taken = new Map<string, { sha256: string; prefixes: Map<number, string> }>();

const signature = (f: string) => {
  const s = statSync(f);
  return { key: JSON.stringify([f, s.size, s.mtimeMs, s.ino]), size: s.size };
};

const combine = (dir: string, files: SourceFile[]) => {
  const h = createHash("sha256");
  for (const f of files) h.update(f.path).update("\0").update(f.sha256).update("\n");
  return h.digest("hex").slice(0, 16);
};

const relPath = (dir: string, f: string) => relative(dir, f).split("\\").join("/");

/**
 * Feeds `feed` the file's bytes through a hash; at each offset of `probes` (bytes from the start)
 * the hash of that prefix is recorded too, so one read tells whether an older, shorter version
 * of the file is its beginning.
 */
async function hashFile(f: string, probes: number[], read: (f: string, on: (b: Buffer) => void) => Promise<void> | void) {
  const sig = signature(f);
  const known = taken.get(sig.key);
  if (known && probes.every((p) => known.prefixes.has(p))) return { ...known, size: sig.size };
  const h: Hash = createHash("sha256");
  const prefixes = new Map<number, string>();
  const wanted = [...new Set(probes)].filter((p) => p >= 0 && p <= sig.size).sort((a, b) => a - b);
  let at = 0;
  let next = 0;
  const take = () => {
    while (next < wanted.length && wanted[next] === at) prefixes.set(wanted[next++], h.copy().digest("hex"));
  };
  take();
  await read(f, (chunk) => {
    let off = 0;
    // Split the chunk at every probe that falls inside it.
    while (next < wanted.length && wanted[next] < at + chunk.length) {
      const cut = wanted[next] - at;
      h.update(chunk.subarray(off, cut));
      at += cut - off;
      off = cut;
      take();
    }
    h.update(chunk.subarray(off));
    at += chunk.length - off;
  });
  take();
  const out = { sha256: h.digest("hex"), prefixes };
  taken.set(sig.key, out);
  return { ...out, size: sig.size };
}

/** Reads in 4 MB chunks: a 2 GB price file never sits in memory whole. */
function readSyncChunks(file: string, on: (b: Buffer) => void): void {
  const buf = Buffer.allocUnsafe(1 << 22);
  const fd = openSync(file, "r");
  try {
    for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0; ) on(buf.subarray(0, n));
  } finally {
    closeSync(fd);
  }
}

async function readAsyncChunks(file: string, on: (b: Buffer) => void): Promise<void> {
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 22 })) on(chunk as Buffer);
}

export interface SourceFiles {
  id: string;
  files: SourceFile[];
  /** Hash of the first `n` bytes, per path, for the probes asked for. */
  prefixes: Map<string, Map<number, string>>;
}

/**
 * Every file of the source with its hash, and the source's fingerprint. `probes`: per relative
 * path, byte offsets whose prefix hash is wanted too (the sizes the published snapshot recorded).
 */
export async function sourceFilesAsync(dir: string, probes: Map<string, number[]> = new Map()): Promise<SourceFiles> {
  const files: SourceFile[] = [];
  const prefixes = new Map<string, Map<number, string>>();
  for (const f of walk(dir)) {
    const path = relPath(dir, f);
    const r = await hashFile(f, probes.get(path) ?? [], readAsyncChunks);
    files.push({ path, size: r.size, sha256: r.sha256 });
    prefixes.set(path, r.prefixes);
  }
  return { id: combine(dir, files), files, prefixes };
}

export function sourceFingerprint(dir: string): string {
  const files: SourceFile[] = [];
  for (const f of walk(dir)) {
    let r: { sha256: string; size: number } | undefined;
    // Synchronous read: `hashFile` with a sync reader resolves in the same tick's microtasks,
    // so take its result through a direct call of the reader instead.
    const sig = signature(f);
    const known = taken.get(sig.key);
    if (known) r = { sha256: known.sha256, size: sig.size };
    else {
      const h = createHash("sha256");
      readSyncChunks(f, (b) => h.update(b));
      const sha256 = h.digest("hex");
      taken.set(sig.key, { sha256, prefixes: new Map() });
      r = { sha256, size: sig.size };
    }
    files.push({ path: relPath(dir, f), ...r });
  }
  return combine(dir, files);
}

/** `sourceFingerprint` with the files read asynchronously, so a run hashes while DuckDB works. */
export async function sourceFingerprintAsync(dir: string): Promise<string> {
  return (await sourceFilesAsync(dir)).id;
}
