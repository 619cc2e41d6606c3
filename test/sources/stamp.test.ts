// A queued run's jobs are named by the source's stamp (paths, sizes, modification times), read from
// the directory alone: the same files unchanged give the same ids (a second command joins the first
// run), any file written since gives new ones; what a snapshot records is the hash of the bytes.
import { appendFileSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hashedBytes, sourceFingerprint, sourceStamp } from "../../pipeline/sources/fingerprint.ts";

const COMPANIES = "ticker,name,sector,industry\nAAA,A,S,I\n";
const PRICES = "date,ticker,close\n2024-01-02,AAA,10\n";

function source(): string {
  const dir = mkdtempSync(join(tmpdir(), "stamp-"));
  writeFileSync(join(dir, "companies.csv"), COMPANIES);
  writeFileSync(join(dir, "prices.csv"), PRICES);
  // a fixed time: the copies below differ from it only where a test changes them
  for (const f of ["companies.csv", "prices.csv"]) utimesSync(join(dir, f), 1_700_000_000, 1_700_000_000);
  return dir;
}

describe("sourceStamp", () => {
  it("reads no byte of the files, and is never a fingerprint", () => {
    const dir = source();
    const before = hashedBytes();
    const stamp = sourceStamp(dir);
    expect(hashedBytes()).toBe(before);
    expect(stamp).toMatch(/^s[0-9a-f]{15}$/);
    expect(sourceFingerprint(dir)).toMatch(/^[0-9a-f]{16}$/);
    expect(hashedBytes() - before).toBe(COMPANIES.length + PRICES.length); // the fingerprint read both files, once
  });

  it("is the same for the same files unchanged, in another folder too", () => {
    expect(sourceStamp(source())).toBe(sourceStamp(source()));
  });

  it("moves when a file is written (even to the same size), grows, or is added", () => {
    const dir = source();
    const stamp = sourceStamp(dir);
    // same bytes, written again: a new modification time
    writeFileSync(join(dir, "prices.csv"), PRICES);
    const rewritten = sourceStamp(dir);
    expect(rewritten).not.toBe(stamp);
    appendFileSync(join(dir, "prices.csv"), "2024-01-03,AAA,11\n");
    utimesSync(join(dir, "prices.csv"), 1_700_000_000, 1_700_000_000);
    expect(sourceStamp(dir)).not.toBe(stamp); // grew: another size, whatever the time says
    const added = source();
    writeFileSync(join(added, "ratings.csv"), "date,ticker,total_rating\n");
    expect(sourceStamp(added)).not.toBe(stamp);
  });
});
