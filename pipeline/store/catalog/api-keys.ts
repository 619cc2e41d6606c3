// API keys: random, shown once, stored only as a hash.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

const PREFIX = "srk_";

/** 32 random bytes: a key is unguessable, so a fast hash (no salt, no stretching) is enough. */
export function generateKey(): string {
  return PREFIX + randomBytes(32).toString("base64url");
}

export function hashKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === y.length && timingSafeEqual(x, y);
}

/** What may be shown of a key after creation: enough to recognise it, not to use it. */
export const keyHint = (key: string) => `${key.slice(0, PREFIX.length + 4)}…`;
