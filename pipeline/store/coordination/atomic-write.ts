// Files that are whole or absent: written under a temporary name beside the final one, then renamed
// over it (a rename within a folder is atomic), so a reader, or a run retried after a crash, never
// sees half a file. None of these writes is fsynced: a power loss may lose the newest file, and every
// caller recomputes what is missing (the store's durability is the published snapshot's folder).
import { renameSync, rmSync, writeFileSync } from "node:fs";

/** A temporary name of this process beside `path` (two processes writing one path do not collide). */
export const tmpBeside = (path: string) => `${path}.${process.pid}.tmp`;

/** Written aside, not yet in place: `commit` renames it over the path, `abort` removes it. */
export interface PendingWrite {
  tmp: string;
  commit(): void;
  abort(): void;
}

/** Writes `data` aside (removed again if the write fails halfway, e.g. a full disk); rename it with commit(). */
export function writeAside(path: string, data: string, tmp = tmpBeside(path)): PendingWrite {
  try {
    writeFileSync(tmp, data);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  return {
    tmp,
    commit: () => renameSync(tmp, path),
    abort: () => rmSync(tmp, { force: true }),
  };
}

/** `data` in place at `path` at once, whole. */
export function writeFileAtomic(path: string, data: string, tmp = tmpBeside(path)): void {
  writeAside(path, data, tmp).commit();
}

export interface ReplaceOptions {
  /** The temporary name (default tmpBeside(path)). */
  tmp?: string;
  /** Remove a leftover of the temporary name before writing it. */
  clearFirst?: boolean;
  /**
   * Remove the temporary name after the rename too: a rename between two hard links of one file
   * does nothing, and leaves both names.
   */
  unlinkAfter?: boolean;
  /** On a failure, leave what `write` wrote at the temporary name (it may be another writer's). */
  keepOnFailure?: boolean;
}

/** Whatever `write` writes at the temporary name it is given, renamed over `path` once it succeeded. */
export async function replaceFileAtomic(
  path: string,
  write: (tmp: string) => Promise<void> | void,
  opts: ReplaceOptions = {},
): Promise<void> {
  const tmp = opts.tmp ?? tmpBeside(path);
  if (opts.clearFirst) rmSync(tmp, { force: true });
  try {
    await write(tmp);
  } catch (e) {
    if (!opts.keepOnFailure) rmSync(tmp, { force: true });
    throw e;
  }
  renameSync(tmp, path);
  if (opts.unlinkAfter) rmSync(tmp, { force: true });
}
