// Secrets and unbounded input out of logs and error bodies.
// Redaction works on any text, not a parsed query: a key must not survive a malformed URL
// (`/benchmarks&api_key=K`, `??api_key=K`, `?x=1;api_key=K`, `?api_key[]=K`, `?api_key%00=K`,
// a percent-encoded name) any more than a well-formed one.

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

/** The URL for a log line: every key-shaped value redacted. */
export function redactUrl(url: string | undefined): string | undefined {
  return url ? redactSecrets(url) : url;
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
