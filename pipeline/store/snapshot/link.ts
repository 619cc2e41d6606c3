// Hard links instead of copies: a snapshot shares every unchanged file with the one before it.
import { linkSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Hard-links every file of `from` into `to`, folders (partitioned tables) file by file. */
export function linkTree(from: string, to: string, skip: (name: string) => boolean = () => false): void {
  mkdirSync(to, { recursive: true });
  for (const f of readdirSync(from)) {
    if (skip(f)) continue;
    if (statSync(join(from, f)).isDirectory()) linkTree(join(from, f), join(to, f));
    else linkSync(join(from, f), join(to, f));
  }
}
