// The fast path's header blocks: for each cached answer and encoding, one flat [name, value, …]
// array built at its first hit, in the order the headers have always been sent, with slots for what
// is per request (X-Request-Id, X-RateLimit-*, and GraphQL's Content-Length). A request fills the
// slots and hands the array to writeHead, which reads it before returning (Node keeps no reference
// to an array passed there), so one array per answer and encoding serves every request.

import type { GraphqlAnswer, RestAnswer } from "../output/answer-cache.ts";
import type { RateHeaders } from "../rate-limit.ts";
import type { HeaderSet } from "../security-headers.ts";

/** Marks an answer the fast path wrote (tests and operators tell the two paths apart by it). */
export const FAST_HEADER = "X-Response-Cache";

type Value = string | number;

/** A header block and where its per-request slots are (-1: not in it). */
interface Block {
  head: Value[];
  id: number;
  rate: number;
  length: number;
}

/** One fast path's header blocks (kept per answer: they go when the answer leaves the cache). */
export interface Heads {
  base: HeaderSet;
  rest: WeakMap<RestAnswer, Block[]>;
  graphql: WeakMap<GraphqlAnswer, Block[]>;
}

export const newHeads = (base: HeaderSet): Heads => ({ base, rest: new WeakMap(), graphql: new WeakMap() });

const RATE_NAMES = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"] as const;

/** Appends `[name, value]…` of a header set to a block. */
function push(head: Value[], set: Record<string, Value>): void {
  for (const name in set) head.push(name, set[name]);
}

/** Appends the three rate-limit slots; their index. */
function pushRate(head: Value[]): number {
  const at = head.length + 1;
  for (const name of RATE_NAMES) head.push(name, "");
  return at;
}

function fill(b: Block, id: string, rate: RateHeaders | undefined, length?: number): Value[] {
  b.head[b.id] = id;
  if (rate !== undefined) {
    b.head[b.rate] = rate["X-RateLimit-Limit"];
    b.head[b.rate + 2] = rate["X-RateLimit-Remaining"];
    b.head[b.rate + 4] = rate["X-RateLimit-Reset"];
  }
  if (length !== undefined) b.head[b.length] = length;
  return b.head;
}

/** The blocks of one answer, by form (`formIndex`). */
function formsOf<A extends object>(map: WeakMap<A, Block[]>, a: A): Block[] {
  let forms = map.get(a);
  if (forms === undefined) {
    forms = [];
    map.set(a, forms);
  }
  return forms;
}

/** A form's index: which of two or three variants, and with X-RateLimit-* or without. */
const formIndex = (variant: number, rated: boolean) => variant * 2 + (rated ? 1 : 0);

function restBlock(a: RestAnswer, coding: "br" | "gzip" | null, rated: boolean): Block {
  const head: Value[] = [];
  push(head, a.headers);
  head.push("X-Request-Id", "", FAST_HEADER, "hit");
  const id = head.length - 3;
  const rate = rated ? pushRate(head) : -1;
  if (coding !== null) head.push("Content-Encoding", coding);
  head.push("Content-Length", (coding === null ? a.body : a[coding]!).length);
  return { head, id, rate, length: -1 };
}

/**
 * A REST answer's 200 headers: as Express sent them, then X-Request-Id, the fast path's mark,
 * X-RateLimit-*, Content-Encoding and Content-Length. `coding`: the body sent is that form.
 */
export function restHead(
  heads: Heads,
  a: RestAnswer,
  coding: "br" | "gzip" | null,
  id: string,
  rate: RateHeaders | undefined,
): Value[] {
  const forms = formsOf(heads.rest, a);
  const i = formIndex(coding === null ? 0 : coding === "br" ? 1 : 2, rate !== undefined);
  forms[i] ??= restBlock(a, coding, rate !== undefined);
  return fill(forms[i], id, rate);
}

function graphqlBlock(base: HeaderSet, mediaType: string, rated: boolean): Block {
  const head: Value[] = ["X-Request-Id", ""];
  push(head, base);
  const rate = rated ? pushRate(head) : -1;
  head.push("Content-Type", `${mediaType}; charset=utf-8`, "Content-Length", 0);
  const length = head.length - 1;
  head.push("Cache-Control", "no-store", FAST_HEADER, "hit");
  return { head, id: 1, rate, length };
}

/** A GraphQL answer's 200 headers (its Content-Length per request: the cost report's length varies). */
export function graphqlHead(
  heads: Heads,
  a: GraphqlAnswer,
  mediaType: string,
  length: number,
  id: string,
  rate: RateHeaders | undefined,
): Value[] {
  const forms = formsOf(heads.graphql, a);
  const i = formIndex(mediaType === "application/json" ? 0 : 1, rate !== undefined);
  forms[i] ??= graphqlBlock(heads.base, mediaType, rate !== undefined);
  return fill(forms[i], id, rate, length);
}
