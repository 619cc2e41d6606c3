// REST requests generated from the served OpenAPI document: per operation, each query parameter
// absent, valid, invalid, odd or repeated, and path segments known or garbage. Each value is
// judged by classify(), the suite's own reading of the parameter's JSON Schema plus the
// contract's rules the schema cannot carry (calendar dates, the ranges grammar, unknown
// benchmark ids), independent of the server's zod code. A new route is covered without edits.
import fc from "fast-check";
import { RATING_NAMES as CONTRACT_RATING_NAMES } from "../../pipeline/types.ts";
import { FUZZ } from "./config.ts";

type Json = Record<string, unknown>;
export interface OaParam {
  name: string;
  in: "query" | "path";
  required: boolean;
  schema: Json;
}
export interface Operation {
  id: string;
  /** OpenAPI path, e.g. /data/v1/stock_ratings/{ticker} */
  path: string;
  params: OaParam[];
}

/** GET operations of the document, without api_key (every request carries the key in a header). */
export function operationsOf(doc: Json): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, { get?: Json }>)) {
    const get = item.get;
    if (!get) continue;
    const params = (get.parameters as OaParam[]).filter((p) => p.name !== "api_key");
    ops.push({ id: String(get.operationId), path, params });
  }
  return ops;
}

/**
 * valid: the contract accepts it; invalid: a 400 naming the parameter; semantic: a 400 naming it
 * once the path resolved (unknown benchmark id); either: the contract does not say (case variants).
 */
export type Verdict = "valid" | "invalid" | "semantic" | "either";

/** What the suite knows of the served data: values that are not garbage. */
export interface Known {
  tickers: string[];
  portfolioIds: string[];
  watchlistIds: string[];
  benchmarkIds: string[];
}

/** C0 control characters and DEL: refused in every parameter (api/README.md, "Control characters"). */
// biome-ignore lint/complexity/useRegexLiterals: the literal form trips noControlCharactersInRegex
export const CONTROL_RE = new RegExp("[\\u0000-\\u001f\\u007f]");
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const DATE_LIKE = /^(\d{4})-(\d{2})-(\d{2})$/;
// the contract's rating names, the one vocabulary (pipeline/types.ts)
export const RATING_NAMES: readonly string[] = CONTRACT_RATING_NAMES;

function realDate(s: string): boolean {
  const m = DATE_LIKE.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]));
  return d.getUTCFullYear() === +m[1] && d.getUTCMonth() === +m[2] - 1 && d.getUTCDate() === +m[3];
}

/** Contract §3: strict JSON or unquoted keys; rating names only; 0 <= min <= max <= 10. */
function rangesVerdict(s: string): Verdict {
  let v: unknown;
  try {
    v = JSON.parse(s);
  } catch {
    try {
      v = JSON.parse(s.replace(/([{,]\s*)([A-Za-z_][A-Za-z0-9_]*)\s*:/g, '$1"$2":'));
    } catch {
      return "invalid";
    }
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return "invalid";
  for (const [k, b] of Object.entries(v)) {
    if (!RATING_NAMES.includes(k)) return "invalid";
    if (b === null) return "either"; // a null bound: the contract does not say
    if (!Array.isArray(b) || b.length !== 2 || !b.every((x) => typeof x === "number")) return "invalid";
    const [lo, hi] = b as number[];
    if (!(lo >= 0 && lo <= hi && hi <= 10)) return "invalid";
  }
  return "valid";
}

function numberVerdict(s: string, schema: Json): Verdict {
  if (!DECIMAL.test(s)) return "invalid";
  const n = Number(s);
  if (!Number.isFinite(n)) return "invalid";
  if (schema.type === "integer" && !Number.isSafeInteger(n)) return "invalid";
  if (typeof schema.minimum === "number" && n < schema.minimum) return "invalid";
  if (typeof schema.exclusiveMinimum === "number" && n <= schema.exclusiveMinimum) return "invalid";
  if (typeof schema.maximum === "number" && n > schema.maximum) return "invalid";
  return "valid";
}

/** The verdict on one (decoded) value of a query parameter. */
export function classify(p: OaParam, value: string, known: Known): Verdict {
  const s = p.schema;
  if (CONTROL_RE.test(value)) return "invalid"; // C0 controls and DEL: a 400 naming the parameter
  if (p.name === "ranges") return rangesVerdict(value);
  if (Array.isArray(s.enum)) {
    if (s.enum.includes(value)) return "valid";
    return s.enum.some((e) => String(e).toLowerCase() === value.toLowerCase()) ? "either" : "invalid";
  }
  if (s.type === "integer" || s.type === "number") return numberVerdict(value, s);
  if (typeof s.pattern === "string") {
    if (!new RegExp(s.pattern, "u").test(value)) return new RegExp(s.pattern, "iu").test(value) ? "either" : "invalid";
    if (s.pattern === DATE_LIKE.source) return realDate(value) ? "valid" : "invalid";
    if (p.name === "benchmark") return known.benchmarkIds.includes(value) ? "valid" : "semantic";
  }
  if (typeof s.maxLength === "number") {
    if ([...value].length > s.maxLength) return "invalid";
    if (value.length > s.maxLength) return "either"; // UTF-16 units vs code points
  }
  return "valid";
}

// ---- encoding: every byte outside RFC 3986's unreserved set is percent-encoded
const UNRESERVED = /[A-Za-z0-9\-._~]/;
export function pctBytes(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    out += b < 128 && UNRESERVED.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}
export const pct = (s: string) => pctBytes(Buffer.from(s, "utf8"));

/** A generated value: its text on the wire and the text the server decodes from it. */
export interface Wire {
  enc: string;
  decoded: string;
}
const wire = (s: string): Wire => ({ enc: pct(s), decoded: Buffer.from(s, "utf8").toString("utf8") });
const bytesWire = (b: Uint8Array): Wire => ({ enc: pctBytes(b), decoded: Buffer.from(b).toString("utf8") });

// ---- string families shared by every parameter
const NUL = fc.constantFrom("\u0000", "a\u0000", "\u0000a", "a\u0000b");
const CONTROL = fc.constantFrom(..."\u0000\u0001\u0007\b\t\n\u000b\f\r\u001b\u001f\u007f\u0085\u2028");
const controlString = fc
  .array(fc.oneof(CONTROL, fc.string({ maxLength: 3 })), { minLength: 1, maxLength: 6 })
  .map((a) => a.join(""));
const unicodeString = fc.oneof(
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.constantFrom("Ä", "ß", "İ", "ﬀ", "𝔸𝔹", "😀", "\uFEFF", "\u202E", "Ａ", "ＡＡＰＬ", "\uD800", "\uDFFF"),
);
const longString = fc
  .tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.integer({ min: 150, max: 6000 }))
  .map(([s, n]) => s.repeat(Math.ceil(n / s.length)).slice(0, n));
const sqlish = fc.constantFrom(
  "'",
  "''",
  "%",
  "_",
  "\\",
  "' OR 1=1 --",
  '"; DROP TABLE x; --',
  "%' AND '1'='1",
  "*",
  "[a-z]",
  "$" + "{x}", // a template placeholder, as text
  "{{7*7}}",
  "null",
  "undefined",
  "__proto__",
  "constructor",
  "[object Object]",
);
const hugeNumber = fc.constantFrom(
  "1e400",
  "-1e400",
  "1e-400",
  "99999999999999999999999",
  "9007199254740993",
  "9007199254740991",
  "-9007199254740993",
  "2147483648",
  "-2147483649",
  "NaN",
  "Infinity",
  "-Infinity",
  "0x10",
  "0b1",
  "0o7",
  "1_000",
  " 5",
  "5 ",
  "",
  "-0",
  "+0",
  ".5",
  "5.",
  "1.5",
  "-1",
  "1,5",
  "١٢",
  "1e2",
  "1E+2",
  "--1",
);
const dateish = fc.oneof(
  fc
    .date({ min: new Date("1900-01-01"), max: new Date("2100-12-31"), noInvalidDate: true })
    .map((d) => d.toISOString().slice(0, 10)),
  fc
    .tuple(fc.integer({ min: 0, max: 99999 }), fc.integer({ min: -1, max: 14 }), fc.integer({ min: -1, max: 40 }))
    .map(([y, m, d]) => `${String(y).padStart(4, "0")}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`),
  fc.constantFrom(
    "2015-02-29",
    "2016-02-29",
    "2015-02-30",
    "2015-13-01",
    "2015-00-10",
    "15-01-01",
    "2015/01/01",
    "2015-1-1",
    "20150101",
    "2015-01-01T00:00:00Z",
    "2015-01-01 ",
    "２０１５-０１-０１",
    "0000-01-01",
    "9999-12-31",
  ),
);
const rangesish = fc.oneof(
  fc
    .array(
      fc.tuple(
        fc.oneof(fc.constantFrom(...RATING_NAMES), fc.constantFrom("totalRating", "x", "__proto__", "")),
        fc.oneof(
          fc.tuple(fc.double({ min: -2, max: 12, noNaN: true }), fc.double({ min: -2, max: 12, noNaN: true })),
          fc.tuple(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 10 })),
          fc.constantFrom([1], [1, 2, 3], ["1", "2"], null, 5),
        ),
      ),
      { maxLength: 4 },
    )
    .chain(([...entries]) =>
      fc.boolean().map((quoted) => {
        const body = entries.map(([k, b]) => `${quoted ? JSON.stringify(k) : k}:${JSON.stringify(b)}`).join(",");
        return `{${body}}`;
      }),
    ),
  fc.constantFrom("{", "[]", "[1,2]", "{}", "null", "1", '"x"', "{total_rating:[1,2]", "{total_rating:[1,2]}}"),
);
const rawBytes = fc.uint8Array({ minLength: 1, maxLength: 12 }).map(bytesWire);

/** Strings any parameter may get, weighted toward the odd. */
const anyText = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 2, arbitrary: controlString },
  { weight: 2, arbitrary: NUL },
  { weight: 2, arbitrary: unicodeString },
  { weight: 1, arbitrary: longString },
  { weight: 2, arbitrary: sqlish },
  { weight: 2, arbitrary: hugeNumber },
  { weight: 1, arbitrary: dateish },
);

/** Values for one parameter: valid ones from its schema, near misses, and the shared odd strings. */
function valueArb(p: OaParam, known: Known): fc.Arbitrary<Wire> {
  const s = p.schema;
  const own: fc.Arbitrary<string>[] = [];
  if (Array.isArray(s.enum)) {
    const e = fc.constantFrom(...(s.enum as string[]));
    own.push(
      e,
      e,
      e.map((v) => v.toUpperCase()),
      fc.tuple(e, fc.constantFrom("-", " ", "x", "%", "\u0000", ",")).map(([v, c]) => `${c}${v}`),
      fc.tuple(e, fc.constantFrom(" ", "s", "\u0000", ",ticker")).map(([v, c]) => `${v}${c}`),
    );
  }
  if (s.type === "integer" || s.type === "number") {
    const lo =
      typeof s.minimum === "number" ? s.minimum : typeof s.exclusiveMinimum === "number" ? s.exclusiveMinimum : -1e6;
    const hi = typeof s.maximum === "number" ? Math.min(s.maximum, 1e9) : 1e9;
    own.push(
      fc.integer({ min: Math.ceil(lo), max: Math.floor(hi) }).map(String),
      fc.constantFrom(lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, Number(s.maximum ?? hi) + 1).map(String),
      hugeNumber,
    );
    if (s.type === "number") own.push(fc.double({ min: lo, max: hi, noNaN: true }).map(String));
  }
  if (typeof s.pattern === "string") {
    own.push(fc.stringMatching(new RegExp(s.pattern)));
    if (s.pattern.includes("\\d{4}")) own.push(dateish, dateish);
  }
  if (p.name === "benchmark" && known.benchmarkIds.length)
    own.push(fc.constantFrom(...known.benchmarkIds), fc.constantFrom("999", "0", "1.0", "01"));
  if (p.name === "ranges") own.push(rangesish, rangesish);
  if (typeof s.maxLength === "number")
    own.push(fc.integer({ min: s.maxLength - 2, max: s.maxLength + 2 }).map((n) => "a".repeat(Math.max(0, n))));
  if (p.name === "search" && known.tickers.length)
    own.push(fc.constantFrom(...known.tickers).map((t) => t.slice(0, 2)));
  const text = own.length
    ? fc.oneof({ weight: 3, arbitrary: fc.oneof(...own) }, { weight: 2, arbitrary: anyText })
    : anyText;
  return fc.oneof({ weight: 9, arbitrary: text.map(wire) }, { weight: 1, arbitrary: rawBytes });
}

/** A query parameter as sent: absent, once, repeated, or a bare name (no `=`). */
type Sent = { p: OaParam; values: Wire[]; bare?: boolean };

export interface RestCase {
  op: Operation;
  target: string;
  /** Path parameter name → its value is one the store knows, another, or malformed percent-encoding. */
  pathState: Record<string, PathState>;
  sent: Sent[];
  verdicts: Record<string, Verdict>;
  /** Undeclared parameters sent (ignored, unless they hold control characters). */
  extra: { name: string; value: string }[];
}

const knownFor = (op: Operation, name: string, known: Known): string[] => {
  if (name === "ticker") return known.tickers;
  if (op.path.includes("/portfolio")) return known.portfolioIds;
  if (op.path.includes("/watchlist")) return known.watchlistIds;
  return [];
};

const MALFORMED_PCT = fc.constantFrom("%", "%z", "%zz", "%E0%A4%A", "%C0%80", "%ED%A0%80", "%FF", "a%2", "%%41");

/** malformed: percent-encoding that is not UTF-8, or control characters; refused while routing. */
export type PathState = "known" | "unknown" | "malformed";

/** Percent-encoding that is not UTF-8 cannot be decoded (RFC 3986 §2.5): malformed. */
function pathState(enc: string, isKnown: (d: string) => boolean): PathState {
  try {
    const d = decodeURIComponent(enc);
    return CONTROL_RE.test(d) ? "malformed" : isKnown(d) ? "known" : "unknown";
  } catch {
    return "malformed";
  }
}

function pathArb(op: Operation, p: OaParam, known: Known): fc.Arbitrary<{ enc: string; state: PathState }> {
  const ks = knownFor(op, p.name, known);
  const ci = p.name === "ticker"; // tickers are case-insensitive
  const isKnown = (d: string) => (ci ? ks.some((k) => k.toUpperCase() === d.toUpperCase()) : ks.includes(d));
  const garbage = fc
    .oneof(
      { weight: 6, arbitrary: anyText.filter((t) => t !== "").map(wire) },
      { weight: 1, arbitrary: rawBytes },
      { weight: 1, arbitrary: fc.constantFrom(".", "..", "1001", "0", "-1", "101", "system", "%2F").map(wire) },
    )
    .map((w): { enc: string; state: PathState } => ({ enc: w.enc, state: pathState(w.enc, isKnown) }));
  const malformed = MALFORMED_PCT.map((enc): { enc: string; state: PathState } => ({ enc, state: "malformed" }));
  if (!ks.length) return fc.oneof(garbage, malformed);
  const good = fc.tuple(fc.constantFrom(...ks), fc.boolean()).map(([k, lower]): { enc: string; state: PathState } => ({
    enc: pct(ci && lower ? k.toLowerCase() : k),
    state: "known",
  }));
  // a known value with something after it: a lookup must not match by prefix nor choke on the rest
  const suffixed = fc
    .tuple(fc.constantFrom(...ks), fc.oneof(NUL, CONTROL, fc.constantFrom("%", "_", " ", ".", "'", "/x", "\uFFFF")))
    .map(([k, t]) => wire(k + t))
    .map((w): { enc: string; state: PathState } => ({ enc: w.enc, state: pathState(w.enc, isKnown) }));
  return fc.oneof(
    { weight: 5, arbitrary: good },
    { weight: 4, arbitrary: garbage },
    { weight: 2, arbitrary: suffixed },
    { weight: 1, arbitrary: malformed },
  );
}

/** A value the schema accepts (the oracle still judges it): the other parameters while one is fuzzed. */
function validArb(p: OaParam, known: Known): fc.Arbitrary<Wire> {
  const s = p.schema;
  let a: fc.Arbitrary<string>;
  if (p.name === "ranges")
    a = fc
      .array(
        fc.tuple(fc.constantFrom(...RATING_NAMES), fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 10 })),
        {
          maxLength: 3,
        },
      )
      .map((es) => `{${es.map(([k, x, y]) => `${k}:[${Math.min(x, y)},${Math.max(x, y)}]`).join(",")}}`);
  else if (Array.isArray(s.enum)) a = fc.constantFrom(...(s.enum as string[]));
  else if (s.type === "integer" || s.type === "number") {
    const lo = typeof s.minimum === "number" ? s.minimum : Number(s.exclusiveMinimum ?? 0) + 1;
    const hi = Math.min(typeof s.maximum === "number" ? s.maximum : 1e6, 1e6);
    a = fc.integer({ min: Math.ceil(lo), max: Math.floor(hi) }).map(String);
  } else if (p.name === "benchmark" && known.benchmarkIds.length) a = fc.constantFrom(...known.benchmarkIds);
  else if (s.pattern === DATE_LIKE.source)
    a = fc
      .date({ min: new Date("2000-01-01"), max: new Date("2030-12-31"), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10));
  else if (typeof s.pattern === "string") a = fc.stringMatching(new RegExp(s.pattern));
  else a = fc.string({ maxLength: 8 });
  return a.map(wire);
}

/** Absent, or one value the schema accepts: a parameter that is not the one being fuzzed. */
const calmArb = (p: OaParam, known: Known): fc.Arbitrary<Sent | null> =>
  fc.oneof(
    { weight: 1, arbitrary: fc.constant<Sent | null>(null) },
    { weight: 1, arbitrary: validArb(p, known).map((v) => ({ p, values: [v] })) },
  );

const sentArb = (p: OaParam, known: Known): fc.Arbitrary<Sent | null> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant<Sent | null>(null) },
    { weight: 6, arbitrary: valueArb(p, known).map((v) => ({ p, values: [v] })) },
    {
      weight: 1,
      arbitrary: fc.array(valueArb(p, known), { minLength: 2, maxLength: 3 }).map((values) => ({ p, values })),
    },
    { weight: 1, arbitrary: fc.constant<Sent>({ p, values: [{ enc: "", decoded: "" }], bare: true }) },
  );

/** Parameters the route does not declare: each refused with a 400 naming it (api/README.md, issue #40). */
const unknownParam = fc
  .tuple(
    fc.oneof(
      fc.constantFrom("foo", "limit[]", "order_by[a]", "__proto__", "constructor", "", "a.b", "%00"),
      fc.string({ maxLength: 6 }),
    ),
    fc.string({ maxLength: 6 }),
  )
  .filter(
    ([k]) =>
      !new RegExp(
        "^(api_key|format|search|order_by|date|ranges|limit|offset|type|benchmark|period|private|value|" +
          "allow_fractional|rebalance_period)$",
      ).test(k),
  )
  .map(([k, v]) => ({ text: `${k === "%00" ? k : pct(k)}=${pct(v)}`, name: k === "%00" ? "\u0000" : k, value: v }));

export function restCaseArb(ops: Operation[], known: Known): fc.Arbitrary<RestCase> {
  return fc.constantFrom(...ops).chain((op) => {
    const query = op.params.filter((p) => p.in === "query");
    const path = op.params.filter((p) => p.in === "path");
    return fc
      .record({
        path: fc.tuple(...path.map((p) => pathArb(op, p, known))),
        // mostly one or two parameters fuzzed and the rest calm, so odd values reach the route's reads
        sent: fc
          .tuple(fc.nat(3), fc.nat(Math.max(0, query.length - 1)), fc.nat(Math.max(0, query.length - 1)))
          .chain(([mode, i, j]) =>
            fc.tuple(
              ...query.map((p, k) =>
                mode === 0 || k === i || (mode === 1 && k === j) ? sentArb(p, known) : calmArb(p, known),
              ),
            ),
          ),
        extra: fc.array(unknownParam, { maxLength: 2 }),
        order: fc.array(fc.nat(), { minLength: 8, maxLength: 8 }),
        slash: fc.boolean(),
      })
      .map(({ path: pv, sent: sv, extra, order, slash }) => {
        let target = op.path;
        const pathState: Record<string, PathState> = {};
        path.forEach((p, i) => {
          target = target.replace(`{${p.name}}`, pv[i].enc);
          pathState[p.name] = pv[i].state;
        });
        const sent = sv.filter((x): x is Sent => x !== null);
        const verdicts: Record<string, Verdict> = {};
        for (const p of query) {
          const s = sent.find((x) => x.p === p);
          if (!s) verdicts[p.name] = p.required ? "invalid" : "valid";
          else if (s.values.length > 1)
            verdicts[p.name] = "invalid"; // repeated: a 400 (api/README.md)
          else verdicts[p.name] = classify(p, s.values[0].decoded, known);
        }
        const pairs = [
          ...sent.flatMap((s) => s.values.map((v) => (s.bare ? s.p.name : `${s.p.name}=${v.enc}`))),
          ...extra.map((e) => e.text),
        ];
        // a shuffle that fast-check can shrink
        const shuffled = pairs
          .map((x, i) => ({ x, k: order[i % order.length] + i / 100 }))
          .sort((a, b) => a.k - b.k)
          .map((e) => e.x);
        if (slash && !target.endsWith("/")) target += "/";
        if (shuffled.length) target += `?${shuffled.join("&")}`;
        return { op, target, pathState, sent, verdicts, extra: extra.map(({ name, value }) => ({ name, value })) };
      });
  });
}

/** Leaves out the inputs of known failure classes other branches are fixing (FUZZ_SKIP_KNOWN=1): NUL reaching SQL. */
export const KNOWN_NUL = /\0/;
export function skipKnownRest(c: RestCase): boolean {
  if (!FUZZ.skipKnown) return false;
  let decodedPath = c.target.split("?")[0];
  try {
    decodedPath = decodeURIComponent(decodedPath);
  } catch {}
  return KNOWN_NUL.test(decodedPath) || c.sent.some((s) => s.values.some((v) => KNOWN_NUL.test(v.decoded)));
}
