// GraphQL documents generated from the served schema (introspection): random selections of
// Query's fields with nesting, aliases, inline and named fragments, arguments as literals or
// variables, valid values and invalid ones. Each case says what the answer must show:
//   docInvalid - a literal or variable the schema's types refuse: a request error (400, no data);
//   named      - argument values the contract refuses, on a field that surely runs: an error
//                naming one of them, and that field null;
// plus the adversarial documents (fragment cycles and bombs, thousands of fields or aliases, deep
// nesting) whose only rule is the universal one: a 4xx or a 200, never a 5xx, and fast.
import fc from "fast-check";
import {
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
} from "graphql";
import { FUZZ } from "./config.ts";
import { CONTROL_RE, type Known, RATING_NAMES } from "./rest-arbs.ts";

export interface GqlCase {
  kind: string;
  query: string;
  variables?: Record<string, unknown>;
  /** The schema's types refuse the document or its variables: a request error. */
  docInvalid: boolean;
  /** Response paths (keys) of fields that must fail, each with the argument names one of which the error names. */
  named: { path: string[]; args: string[] }[];
  /** A validation error is the only right answer (e.g. a fragment cycle). */
  mustRefuse?: boolean;
}

type G = fc.GeneratorValue;
type Val = { text: string; json: unknown; kind: "valid" | "semantic" | "type" | "unsure" };

const ORDER = ["ticker", "name", "market_cap", ...RATING_NAMES];
const RATING_CAMEL = RATING_NAMES.map((n) => n.replace(/_(\w)/g, (_, c: string) => c.toUpperCase()));

const lit = (s: string) => JSON.stringify(s); // JSON string escapes are GraphQL string escapes

const oddString = fc.oneof(
  fc.string({ maxLength: 10 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.string({ unit: "grapheme", maxLength: 10 }),
  fc.constantFrom("\u0000", "a\u0000b", "\u0007", "\r\n", "\u007f", "'", "%", "_", "\\", "' OR 1=1 --", "😀", "\uFEFF"),
  fc.integer({ min: 201, max: 5000 }).map((n) => "x".repeat(n)),
);

/** A value for one argument, with what the contract says of it. */
function argValue(g: G, field: string, a: GraphQLArgument, known: Known): Val {
  const t = a.type;
  const named = getNamedType(t);
  const n = a.name;
  const choice = g(() => fc.nat(9));
  if (isListType(isNonNullType(t) ? t.ofType : t) || isInputObjectType(named)) {
    if (named.name === "RatingRangesInput" || isInputObjectType(named)) return rangesValue(g, choice);
  }
  // type errors: literals the declared type refuses
  if (choice === 0 && g(fc.nat, 2) === 0) {
    if (named.name === "Int")
      return g(() =>
        fc.constantFrom<Val>(
          { text: "2147483648", json: 2147483648, kind: "type" },
          { text: "1.5", json: 1.5, kind: "type" },
          { text: '"5"', json: "5", kind: "type" },
          { text: "true", json: true, kind: "type" },
        ),
      );
    if (isEnumType(named)) return { text: "nope", json: "nope", kind: "type" };
    if (named.name === "Boolean") return { text: '"true"', json: "true", kind: "type" };
    if (named.name === "Float") return { text: '"1"', json: "1", kind: "type" };
    if (named.name === "String" || named.name === "ID") return { text: "[1]", json: [1], kind: "type" };
  }
  if (isEnumType(named)) {
    const v = g(() => fc.constantFrom(...named.getValues().map((e) => e.name)));
    return { text: v, json: v, kind: "valid" };
  }
  if (named.name === "Boolean") {
    const v = g(fc.boolean);
    return { text: String(v), json: v, kind: "valid" };
  }
  if (named.name === "Int") {
    const v =
      choice < 5
        ? g(fc.integer, { min: 0, max: 200 })
        : g(() => fc.oneof(fc.integer({ min: -2147483648, max: 2147483647 }), fc.constantFrom(-1, 201, 0, 200)));
    const ok = n !== "first" || (v >= 0 && v <= 200);
    return { text: String(v), json: v, kind: ok ? "valid" : "semantic" };
  }
  if (named.name === "Float") {
    const v =
      choice < 5
        ? g(fc.double, { min: 1, max: 1e6, noNaN: true })
        : g(() =>
            fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -1, 1000, 1000.5, 1e6)),
          );
    let kind: Val["kind"] = "valid";
    if (n === "period") kind = v > 0 && v <= 1000 ? "valid" : "semantic";
    if (n === "value") kind = Number.isSafeInteger(v) && v > 0 ? "valid" : "semantic";
    return { text: String(v), json: v, kind };
  }
  // String and ID
  let s: string;
  let kind: Val["kind"] = "unsure";
  if (n === "orderBy") {
    s = choice < 6 ? g(() => fc.constantFrom(...ORDER.flatMap((o) => [o, `-${o}`]))) : g(() => oddString);
    kind = ORDER.includes(s.replace(/^-/, "")) ? "valid" : "semantic";
  } else if (n === "date") {
    s = g(() =>
      fc.oneof(
        fc
          .date({ min: new Date("2000-01-01"), max: new Date("2100-01-01"), noInvalidDate: true })
          .map((d) => d.toISOString().slice(0, 10)),
        fc.constantFrom("2015-02-30", "2015-13-01", "15-01-01", "2015-1-1", "", "\u0000"),
        oddString,
      ),
    );
    kind =
      /^\d{4}-\d{2}-\d{2}$/.test(s) &&
      !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) &&
      new Date(`${s}T00:00:00Z`).toISOString().startsWith(s)
        ? "valid"
        : "semantic";
  } else if (n === "search") {
    s =
      choice < 4 && known.tickers.length ? g(() => fc.constantFrom(...known.tickers)).slice(0, 2) : g(() => oddString);
    kind = s.length <= 200 ? "valid" : "semantic";
  } else if (n === "after") {
    // cursors are opaque; base64url("o:<digits>") is the only form the server made (api/graphql/relay.ts says so)
    const off = g(fc.nat, 300);
    s = choice < 4 ? Buffer.from(`o:${off}`).toString("base64url") : `!${g(() => oddString)}`;
    kind = s.startsWith("!") ? "semantic" : "unsure"; // a cursor past the list's end may be refused
  } else if (n === "benchmark") {
    s = choice < 5 && known.benchmarkIds.length ? g(() => fc.constantFrom(...known.benchmarkIds)) : g(() => oddString);
    kind = known.benchmarkIds.includes(s) ? "valid" : "semantic";
  } else if (n === "ticker") {
    s = choice < 7 && known.tickers.length ? g(() => fc.constantFrom(...known.tickers)) : g(() => oddString);
    if (choice === 6) s = s.toLowerCase();
    kind = known.tickers.includes(s) ? "valid" : "unsure";
  } else if (n === "id") {
    const ids = field === "watchlist" ? known.watchlistIds : known.portfolioIds;
    s = choice < 7 && ids.length ? g(() => fc.constantFrom(...ids)) : g(() => oddString);
    kind = ids.includes(s) ? "valid" : "unsure";
  } else s = g(() => oddString);
  if (CONTROL_RE.test(s)) kind = "semantic"; // control characters: BAD_USER_INPUT naming the argument
  return { text: lit(s), json: s, kind };
}

function rangesValue(g: G, choice: number): Val {
  if (choice === 0) return { text: "{nope: [1, 2]}", json: { nope: [1, 2] }, kind: "type" };
  const entries = g(() =>
    fc.array(
      fc.tuple(
        fc.constantFrom(...RATING_CAMEL),
        fc.oneof(
          fc
            .tuple(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 10 }))
            .map(([a, b]) => [Math.min(a, b), Math.max(a, b)]),
          fc.array(fc.double({ min: -5, max: 15, noNaN: true }), { maxLength: 3 }),
        ),
      ),
      { maxLength: 3 },
    ),
  );
  const obj: Record<string, number[]> = {};
  for (const [k, b] of entries) obj[k] = b;
  const ok = Object.values(obj).every((b) => b.length === 2 && b[0] >= 0 && b[0] <= b[1] && b[1] <= 10);
  const text = `{${Object.entries(obj)
    .map(([k, b]) => `${k}: [${b.map((x) => String(x)).join(", ")}]`)
    .join(", ")}}`;
  return { text, json: obj, kind: ok ? "valid" : "semantic" };
}

/** GraphQL type text of an input type, for a variable's declaration. */
const typeText = (t: GraphQLInputType): string => String(t);

interface Ctx {
  g: G;
  schema: GraphQLSchema;
  known: Known;
  vars: { decl: string[]; values: Record<string, unknown> };
  fragments: string[];
  docInvalid: boolean;
  named: GqlCase["named"];
  n: number;
}

/**
 * A selection set on `type`. `sure`: the fields here surely run (root, or under a single object
 * fetched by a known id with valid arguments), so a field with a refused argument must fail by name.
 */
function selection(c: Ctx, type: GraphQLObjectType, depth: number, path: string[], sure: boolean): string {
  const { g } = c;
  const fields = Object.values(type.getFields()).filter((f) => depth > 0 || isLeafType(getNamedType(f.type)));
  if (!fields.length) return "__typename";
  const count = g(fc.integer, { min: 1, max: Math.min(4, fields.length) });
  const parts: string[] = [];
  const used = new Set<string>();
  for (let i = 0; i < count; i++) {
    const f = g(() => fc.constantFrom(...fields));
    parts.push(fieldText(c, f, depth, path, sure, used));
  }
  // sometimes wrap part of it in an inline or a named fragment
  const wrap = g(fc.nat, 5);
  if (wrap === 0) return `... on ${type.name} { ${parts.join(" ")} }`;
  if (wrap === 1) {
    const name = `F${c.n++}`;
    c.fragments.push(`fragment ${name} on ${type.name} { ${parts.join(" ")} }`);
    return `...${name}`;
  }
  return parts.join(" ");
}

function fieldText(
  c: Ctx,
  f: GraphQLField<unknown, unknown>,
  depth: number,
  path: string[],
  sure: boolean,
  used: Set<string>,
): string {
  const { g } = c;
  let key = f.name;
  let alias = "";
  if (used.has(key) || g(fc.nat, 3) === 0) {
    key = `a${c.n++}_${g(() => fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,6}$/))}`;
    alias = `${key}: `;
  }
  used.add(key);
  const args: string[] = [];
  const semantic: string[] = [];
  const unsure: string[] = [];
  let argsOk = true;
  let hasBenchmark = false;
  let rollingBeta = false;
  for (const a of f.args) {
    const required = isNonNullType(a.type) && a.defaultValue === undefined;
    if (!required && g(fc.nat, 2) === 0) continue;
    const v = argValue(g, f.name, a, c.known);
    if (v.kind === "type") c.docInvalid = true;
    if (v.kind === "semantic") semantic.push(a.name);
    if (v.kind === "unsure") unsure.push(a.name);
    if (v.kind !== "valid") argsOk = false;
    if (a.name === "benchmark" && v.kind === "valid") hasBenchmark = true;
    if (a.name === "type" && v.json === "ROLLING_BETA") rollingBeta = true;
    if (g(fc.nat, 3) === 0) {
      // as a variable, sometimes with a value of the wrong type
      const name = `v${c.n++}`;
      c.vars.decl.push(`$${name}: ${typeText(a.type)}`);
      const wrong = g(fc.nat, 15) === 0;
      c.vars.values[name] = wrong ? { not: "this" } : v.json;
      if (wrong) c.docInvalid = true;
      args.push(`${a.name}: $${name}`);
    } else args.push(`${a.name}: ${v.text}`);
  }
  if (rollingBeta && !hasBenchmark) semantic.push("benchmark");
  // the field fails on the first argument it checks: any refused or open one may be named
  if (sure && semantic.length) c.named.push({ path: [...path, key], args: [...semantic, ...unsure] });
  const named = getNamedType(f.type) as GraphQLNamedType;
  const head = `${alias}${f.name}${args.length ? `(${args.join(", ")})` : ""}`;
  if (!isObjectType(named)) return head;
  // Under a single object fetched by a known id, its fields surely run; lists may be empty.
  const single = !isListType(isNonNullType(f.type) ? f.type.ofType : f.type) && !named.name.endsWith("Connection");
  // argsOk: every argument valid, so the id or ticker is one the store knows
  const stillSure = sure && single && argsOk && args.length > 0 && ["stock", "portfolio", "watchlist"].includes(f.name);
  return `${head} { ${selection(c, named, depth - 1, [...path, key], stillSure)} }`;
}

/** An ordinary query over the schema, with the verdicts its arguments earn. */
export function queryArb(schema: GraphQLSchema, known: Known): fc.Arbitrary<GqlCase> {
  return fc.gen().map((g) => {
    const c: Ctx = {
      g,
      schema,
      known,
      vars: { decl: [], values: {} },
      fragments: [],
      docInvalid: false,
      named: [],
      n: 0,
    };
    const depth = g(fc.integer, { min: 1, max: 5 });
    const body = selection(c, schema.getQueryType()!, depth, [], true);
    const named = g(fc.boolean);
    const head =
      c.vars.decl.length || named
        ? `query Q${named ? "Op" : ""}${c.vars.decl.length ? `(${c.vars.decl.join(", ")})` : ""} `
        : "";
    const query = `${head}{ ${body} }\n${c.fragments.join("\n")}`;
    // a fragment wrapped around the root cannot collect the named fields' paths differently: keys stay
    return { kind: "query", query, variables: c.vars.values, docInvalid: c.docInvalid, named: c.named };
  });
}

/** Documents built to be expensive to parse, validate or plan. */
export function adversarialArb(): fc.Arbitrary<GqlCase> {
  const fieldFlood = fc.integer({ min: 1000, max: 12_000 }).map((n) => ({
    kind: "fields",
    query: `{ ${"__typename ".repeat(n)}}`,
    docInvalid: false,
    named: [],
  }));
  const aliasFlood = fc
    .tuple(
      fc.integer({ min: 1000, max: 15_000 }),
      fc.constantFrom("benchmarks { id }", "__typename", "stocks(first: 1) { totalCount }"),
    )
    .map(([n, f]) => ({
      kind: "aliases",
      query: `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${f}`).join(" ")} }`,
      docInvalid: false,
      named: [],
    }));
  const cycle = fc.integer({ min: 1, max: 50 }).map((n) => ({
    kind: "fragment-cycle",
    query:
      "{ ...F0 }\n" +
      Array.from({ length: n }, (_, i) => `fragment F${i} on Query { benchmarks { id } ...F${(i + 1) % n} }`).join(
        "\n",
      ),
    docInvalid: true,
    named: [],
    mustRefuse: true,
  }));
  const bomb = fc.tuple(fc.integer({ min: 5, max: 40 }), fc.integer({ min: 2, max: 4 })).map(([levels, fan]) => ({
    kind: "fragment-bomb",
    query: `{ ...F${levels} }\nfragment F0 on Query { benchmarks { id name } }\n${Array.from(
      { length: levels },
      (_, i) => `fragment F${i + 1} on Query { ${`...F${i} `.repeat(fan)}}`,
    ).join("\n")}`,
    docInvalid: false,
    named: [],
  }));
  const deep = fc.integer({ min: 10, max: 400 }).map((n) => {
    let q = "ticker";
    for (let i = 0; i < n; i++) q = `ratings(first: 1) { edges { node { stock { ${q} } } } }`;
    return { kind: "deep", query: `{ stock(ticker: "AAPL") { ${q} } }`, docInvalid: false, named: [] };
  });
  const directives = fc.integer({ min: 100, max: 5000 }).map((n) => ({
    kind: "directives",
    query: `query Q($t: Boolean = true) { benchmarks ${"@include(if: $t) ".repeat(n)}{ id } }`,
    docInvalid: false,
    named: [],
  }));
  const tokens = fc.integer({ min: 1000, max: 50_000 }).map((n) => ({
    kind: "tokens",
    query: `{ benchmarks(${"a: 1, ".repeat(n)}) { id } }`,
    docInvalid: true,
    named: [],
  }));
  const arbs: fc.Arbitrary<GqlCase>[] = [deep, directives, tokens];
  if (!FUZZ.skipKnown) arbs.push(fieldFlood, aliasFlood, cycle, bomb);
  return fc.oneof(...arbs);
}

/** Leaves out the known failure classes other branches are fixing (FUZZ_SKIP_KNOWN=1). */
export function skipKnownGql(c: GqlCase): boolean {
  if (!FUZZ.skipKnown) return false;
  // NUL travels as an escape in string literals and in the variables' JSON
  const nul = /\\u0000/i;
  return nul.test(c.query) || nul.test(JSON.stringify(c.variables ?? {}));
}
