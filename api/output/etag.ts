// Weak ETags: for cacheable reads the tag is derived from the snapshot id and the normalized
// request (so a 304 needs no body at all); for catalog-backed reads, from the body itself.
import { createHash } from "node:crypto";

const h = (s: string | Buffer) => createHash("sha1").update(s).digest("base64url").slice(0, 22);

export const requestEtag = (snapshotId: string, normalizedRequest: string) =>
  `W/"${h(`${snapshotId}\u0000${normalizedRequest}`)}"`;
export const bodyEtag = (body: Buffer) => `W/"b${h(body)}"`;

/** If-None-Match matches (weak comparison, lists and `*` allowed). */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const bare = etag.replace(/^W\//, "");
  for (const t of ifNoneMatch.split(",")) {
    const v = t.trim();
    if (v === "*" || v.replace(/^W\//, "") === bare) return true;
  }
  return false;
}
