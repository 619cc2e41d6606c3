// Size limits of a parsed document, measured before graphql-js validates it: validation (and the
// depth and cost rules) walk every fragment spread again, so a few hundred bytes of nested spreads
// expand to millions of fields, and thousands of repeated fields make the overlap check quadratic.
// This pre-scan counts fields, aliases, fragment spreads and directives as the document would
// expand, with one memoised count per fragment (linear in the document's size however deep the
// spreads nest), and stops at the first fragment cycle (graphql-js's own rule then names it).
import {
  type DocumentNode,
  GraphQLError,
  type GraphQLSchema,
  Kind,
  NoFragmentCyclesRule,
  type SelectionSetNode,
  validate,
} from "graphql";

/** Lexical tokens a document may hold (graphql-js stops parsing past them). */
export const MAX_TOKENS = 5000;

/** Limits on the document as expanded (every fragment spread replaced by its fragment). */
export const DOCUMENT_LIMITS = {
  /** fields selected, counting each spread fragment's fields once per spread */
  fields: 1000,
  /** fields given an alias */
  aliases: 200,
  /**
   * fields whose name (or alias) an earlier field of the same selection already has: graphql-js
   * compares each such pair and their sub-selections (quadratic: 500 repeats took 210 ms)
   */
  repeatedFields: 50,
  /** fragment spreads (named) */
  fragmentSpreads: 200,
  /** directives (@skip, @include) */
  directives: 50,
  /**
   * nesting of fields (introspection subtrees, `__schema` and `__type`, not counted): deeper
   * documents are refused here, since graphql-js's rules walk every level before the depth rule
   * (12, limits.ts) refuses them (a 150-level document held the loop for 150–190 ms); 13 to 24
   * levels still get the depth rule's own message
   */
  nesting: 24,
} as const;

export type DocumentCounts = Record<keyof typeof DOCUMENT_LIMITS, number>;

const zero = (): DocumentCounts => ({
  fields: 0,
  aliases: 0,
  repeatedFields: 0,
  fragmentSpreads: 0,
  directives: 0,
  nesting: 0,
});
const KEYS = Object.keys(DOCUMENT_LIMITS) as (keyof DocumentCounts)[];
/** Counts that add up over a selection; `nesting` is the deepest of them instead. */
const SUMMED = KEYS.filter((k) => k !== "nesting");

/** The document's counts as expanded, or "cycle" when a fragment spreads itself. */
export function countDocument(doc: DocumentNode): DocumentCounts | "cycle" {
  const fragments = new Map<string, SelectionSetNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d.selectionSet);
  const memo = new Map<string, DocumentCounts>();
  const visiting = new Set<string>();
  let cycle = false;

  /** `below`: levels above `c`'s selection (null: an introspection subtree, whose depth is not counted). */
  const add = (into: DocumentCounts, c: DocumentCounts, below: number | null = 0) => {
    for (const k of SUMMED) into[k] += c[k];
    if (below !== null) into.nesting = Math.max(into.nesting, c.nesting + below);
  };
  const ofFragment = (name: string): DocumentCounts => {
    const done = memo.get(name);
    if (done) return done;
    const set = fragments.get(name);
    if (!set || visiting.has(name)) {
      if (set) cycle = true; // unknown fragments are validation's to report
      return zero();
    }
    visiting.add(name);
    const c = ofSet(set);
    visiting.delete(name);
    memo.set(name, c);
    return c;
  };
  /** `keys`: the response names seen in this selection (inline fragments share their parent's). */
  const ofSet = (set: SelectionSetNode, keys = new Set<string>()): DocumentCounts => {
    const c = zero();
    for (const s of set.selections) {
      c.directives += s.directives?.length ?? 0;
      if (s.kind === Kind.FIELD) {
        c.fields++;
        if (s.alias) c.aliases++;
        const key = (s.alias ?? s.name).value;
        if (keys.has(key)) c.repeatedFields++;
        else keys.add(key);
        const introspection = s.name.value.startsWith("__");
        if (!introspection) c.nesting = Math.max(c.nesting, 1);
        if (s.selectionSet) add(c, ofSet(s.selectionSet), introspection ? null : 1);
      } else if (s.kind === Kind.INLINE_FRAGMENT) add(c, ofSet(s.selectionSet, keys));
      else {
        c.fragmentSpreads++;
        add(c, ofFragment(s.name.value));
      }
    }
    return c;
  };

  const total = zero();
  // every definition is validated on its own (a fragment's body too), so each counts
  for (const d of doc.definitions) {
    if (d.kind === Kind.OPERATION_DEFINITION) {
      total.directives += d.directives?.length ?? 0;
      add(total, ofSet(d.selectionSet));
    } else if (d.kind === Kind.FRAGMENT_DEFINITION) add(total, ofFragment(d.name.value));
    if (cycle) return "cycle";
  }
  return total;
}

/** The first limit the document exceeds, as a GraphQL error naming it. */
export function limitError(counts: DocumentCounts): GraphQLError | null {
  for (const k of KEYS)
    if (counts[k] > DOCUMENT_LIMITS[k])
      return new GraphQLError(
        `the document selects ${counts[k]} ${k} (fragments expanded), over the limit of ${DOCUMENT_LIMITS[k]}`,
        { extensions: { code: "QUERY_TOO_COMPLEX", limit: k, max: DOCUMENT_LIMITS[k], found: counts[k] } },
      );
  return null;
}

/** Errors that stop validation before it starts: a fragment cycle, or a limit exceeded. */
export function prescan(schema: GraphQLSchema, doc: DocumentNode): readonly GraphQLError[] {
  const counts = countDocument(doc);
  if (counts === "cycle") return validate(schema, doc, [NoFragmentCyclesRule]);
  const e = limitError(counts);
  return e ? [e] : [];
}

/** graphql-js's token-limit error, reworded to name the limit and given a code. */
export function tokenLimitError(e: unknown): unknown {
  if (!(e instanceof GraphQLError) || !/more \w+ \d+ tokens/.test(e.message)) return e;
  return new GraphQLError(`the document has more than ${MAX_TOKENS} tokens, the limit: send a shorter document`, {
    source: e.source,
    positions: e.positions,
    extensions: { code: "QUERY_TOO_COMPLEX", limit: "tokens", max: MAX_TOKENS },
  });
}
