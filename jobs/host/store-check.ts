// DATA_DIR must be a folder this process can write: checked once at start so a wrong path fails
// with one line instead of a stack trace later (or, under /proc, a recursive mkdir that never
// returns: Node's mkdirSync({ recursive: true }) loops on /proc's ENOENT).
import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

export class StoreDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreDirError";
  }
}

const reason = (e: unknown) => {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === "ENOTDIR") return "a part of the path is a file, not a folder";
  if (code === "ENOENT") return "a folder cannot be created there";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "EROFS") return "the file system is read-only";
  return code ?? String((e as Error).message ?? e);
};

/** Creates `dir` level by level when missing, then proves it writable with a probe file. */
export function ensureWritableDir(dir: string, name = "DATA_DIR"): void {
  const fail = (why: string): never => {
    throw new StoreDirError(`${name} ${dir} is not a writable folder: ${why}`);
  };
  const missing: string[] = [];
  for (let p = dir; ; p = dirname(p)) {
    let isDir: boolean;
    try {
      isDir = statSync(p).isDirectory();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT" || dirname(p) === p) fail(reason(e));
      missing.unshift(p);
      continue;
    }
    if (!isDir) fail(p === dir ? "it is a file" : `${p} is a file, not a folder`);
    break;
  }
  for (const p of missing) {
    try {
      mkdirSync(p);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") fail(reason(e));
    }
  }
  const probe = `${dir}/.write-check-${process.pid}`;
  try {
    writeFileSync(probe, "");
    rmSync(probe, { force: true });
  } catch (e) {
    fail(reason(e));
  }
}
