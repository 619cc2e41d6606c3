// Secrets and unbounded input out of logs and error bodies.
// Redaction works on any text, not a parsed query: a key must not survive a malformed URL
// (`/benchmarks&api_key=K`, `??api_key=K`, `?x=1;api_key=K`, `?api_key[]=K`, `?api_key%00=K`,
// a percent-encoded name) any more than a well-formed one.

import { hashKey } from "../pipeline/store/catalog/api-keys.ts";

export const REDACTED = "[redacted]";

// One letter of the parameter name, literal or percent-encoded (once or more: %2561 is %61 twice).
const enc = (c: string) => `(?:${c}|%(?:25)*${c.charCodeAt(0).toString(16)})`;
// Between "api" and "key": nothing, or _ - . + space, any of them percent-encoded.
const SEP = `(?:[_.+ -]|%(?:25)*(?:5f|2d|2e|2b|20))*`;
const NAME = `${enc("a")}${enc("p")}${enc("i")}${SEP}${enc("k")}${enc("e")}${enc("y")}`;
/**
 * `api_key<junk>=<value>`: the name in any spelling, up to 16 characters of junk before the `=`
 * (`[]`, `%00`, …), then the value up to the next separator of any URL or text.
 */
const NAMED = new RegExp(`(${NAME}[^=&;#/?\\s]{0,16}?(?:=|%(?:25)*3d))[^&;#\\s"',]*`, "gi");
/** A generated key (`srk_` + 43 base64url characters), wherever it stands. */
const KEY_TOKEN = /srk_[A-Za-z0-9_-]{20,}/g;

/** Replaces every key-shaped value in a text (URL, message) with [redacted]. */
export function redactSecrets(text: string): string {
  if (text.indexOf("srk_") >= 0) text = text.replace(KEY_TOKEN, REDACTED);
  // cheap pre-check: the name always contains a "y"/"Y" or its encoding; most URLs hold neither
  return /y|%(?:25)*79/i.test(text) ? text.replace(NAMED, `$1${REDACTED}`) : text;
}

/** Whether a SHA-256 hex digest is the hash of a key the store knows (the catalog keeps only hashes). */
export type IsKeyHash = (sha256Hex: string) => boolean;

// A key of any shape (DEMO_API_KEY is any text of 16 characters or more; generated keys are 47;
// authentication refuses keys over 512) stands in a URL as one token between its separators.
const KEY_MIN = 16;
const KEY_MAX = 512;
const URL_TOKEN = /(?<![^/?&=;#,\s])[^/?&=;#,\s]{16,}/g;

// What a recent token reads as: its hash, and its percent-decoded form's hash when that differs and
// has a key's length. The long tokens are mostly endpoint names, ids and persisted-query extensions
// that recur (a SHA-256 costs several µs, a decode about one); bounded, as tokens of unknown keys and
// junk would grow it. Pure functions of the token: whether a hash is a known key is asked each time.
const TOKEN_MEMO_MAX = 2_000;
const tokenMemo = new Map<string, { hash: string | null; plainHash: string | null }>();
function readingsOf(token: string): { hash: string | null; plainHash: string | null } {
  let r = tokenMemo.get(token);
  if (r === undefined) {
    if (tokenMemo.size >= TOKEN_MEMO_MAX) tokenMemo.clear();
    r = { hash: token.length <= KEY_MAX ? hashKey(token) : null, plainHash: plainHashOf(token) };
    tokenMemo.set(token, r);
  }
  return r;
}

/** The hash of a token's percent-decoded form, when decoding changes it and leaves a key's length. */
function plainHashOf(token: string): string | null {
  if (!token.includes("%") && !token.includes("+")) return null;
  let plain: string;
  try {
    plain = decodeURIComponent(token.replaceAll("+", " "));
  } catch {
    return null; // not valid percent-encoding: as it stands was the only reading
  }
  return plain !== token && plain.length >= KEY_MIN && plain.length <= KEY_MAX ? hashKey(plain) : null;
}

/** Whether a token of a URL, as it stands or percent-decoded, is a key the store knows. */
function isKnownKey(token: string, isKeyHash: IsKeyHash): boolean {
  // Only tokens of a key's length are hashed: most URLs hold none (the api_key value is already redacted).
  const { hash, plainHash } = readingsOf(token);
  return (hash !== null && isKeyHash(hash)) || (plainHash !== null && isKeyHash(plainHash));
}

/**
 * Every token of a URL (path segment, query name or value) that is a key the store knows, replaced
 * with [redacted]: found by its hash, so a key of any shape is, not only the generated srk_ form.
 */
export function redactKnownKeys(url: string, isKeyHash: IsKeyHash): string {
  return url.replace(URL_TOKEN, (token) => (isKnownKey(token, isKeyHash) ? REDACTED : token));
}

/** A URL's key-shaped values redacted, and the readings of its long tokens (pure functions of the URL). */
interface UrlReading {
  text: string;
  tokens: { hash: string | null; plainHash: string | null }[];
}

// What a recent URL reads as: a read repeated by many clients logs the same URL again and again, and
// reading it (two regular expressions over the whole URL, a hash lookup per long token) cost 2.5-3.5 µs
// per line. Only the readings are kept: whether a token's hash is a known key is asked each time (a key
// created since must be redacted). Bounded as the token memo; raw URLs hold keys, so this stays in memory.
const URL_MEMO_MAX = 2_000;
const URL_MEMO_CHARS = 4096;
const urlMemo = new Map<string, UrlReading>();

function readingOf(url: string): UrlReading {
  let r = urlMemo.get(url);
  if (r === undefined) {
    const text = redactSecrets(url);
    r = { text, tokens: (text.match(URL_TOKEN) ?? []).map(readingsOf) };
    if (url.length > URL_MEMO_CHARS) return r;
    if (urlMemo.size >= URL_MEMO_MAX) urlMemo.clear();
    urlMemo.set(url, r);
  }
  return r;
}

/** The URL for a log line: every key-shaped value redacted, and every known key when `isKeyHash` is given. */
export function redactUrl(url: string | undefined, isKeyHash?: IsKeyHash): string | undefined {
  if (!url) return url;
  const r = readingOf(url);
  if (!isKeyHash) return r.text;
  for (const { hash, plainHash } of r.tokens)
    if ((hash !== null && isKeyHash(hash)) || (plainHash !== null && isKeyHash(plainHash)))
      return redactKnownKeys(r.text, isKeyHash);
  return r.text;
}

/** How much of a user's value an error message repeats. */
export const ECHO_MAX = 64;
/** Total length of an error message, whatever it repeats. */
const MESSAGE_MAX = 512;
const LONG_RUN = new RegExp(`\\S{${ECHO_MAX + 1},}`, "g");

const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);

/**
 * An error message as it may be shown: keys redacted, any run of more than 64 non-space
 * characters (a repeated value) cut to 64 with an ellipsis, the whole at most 512 characters.
 */
export function boundedMessage(message: string): string {
  const m = redactSecrets(message);
  const runs = m.length > ECHO_MAX ? m.replace(LONG_RUN, (run) => cut(run, ECHO_MAX)) : m;
  return cut(runs, MESSAGE_MAX);
}
