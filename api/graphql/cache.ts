// Caches for the GraphQL read path, all bounded:
// - parsed documents per query text (parsed with the token limit), the size pre-scan per document
//   (prescan.ts), and validation results with the operation's cost per (document, variables,
//   operationName): the cost depends on the variables, everything else on the document;
// - whole responses of queries that read only the snapshot (stock ratings, stocks, benchmarks,
//   introspection), per snapshot id and the caller's scopes, in the app's response cache
//   (api/output/answer-cache.ts), which the node:http fast path also answers persisted GETs from.
//   Queries that touch the catalog (portfolios, watchlists, profile) are built per request;
// - automatic persisted queries: query texts by their SHA-256 (PersistedQueries).

import { createHash } from "node:crypto";
import {
  type DocumentNode,
  type GraphQLError,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
  parse,
  type Source,
  specifiedRules,
  type ValidationRule,
  validate,
} from "graphql";
import { LRUCache } from "lru-cache";
import { type AnswerCache, type GraphqlAnswer, scopeSet } from "../output/answer-cache.ts";
import type { CostSink } from "./limits.ts";
import { MAX_TOKENS, prescan, tokenLimitError } from "./prescan.ts";

/** Root fields whose whole subtree reads only the published snapshot (or the schema). */
const SNAPSHOT_ONLY_ROOTS = new Set([
  "stockRatings",
  "stock",
  "stocks",
  "ratingEvidence",
  "benchmarks",
  "__schema",
  "__type",
  "__typename",
]);

const MAX_QUERY_CHARS = 20_000; // longer documents are parsed every time, not kept

const parseBounded = (source: string | Source): DocumentNode => {
  try {
    return parse(source, { maxTokens: MAX_TOKENS });
  } catch (e) {
    throw tokenLimitError(e);
  }
};

interface Validated {
  errors: readonly GraphQLError[];
  cost: number | undefined;
}

export class DocumentCache {
  private docs = new LRUCache<string, DocumentNode>({ max: 500 });
  private scanned = new WeakMap<DocumentNode, readonly GraphQLError[]>();
  private validated = new WeakMap<DocumentNode, LRUCache<string, Validated>>();
  /** rules array of one request → its cache key and where its cost goes (set by `tag`, read by `validate`) */
  private keys = new WeakMap<readonly ValidationRule[], { key: string; sink: CostSink }>();

  parse = (source: string | Source): DocumentNode => {
    if (typeof source !== "string" || source.length > MAX_QUERY_CHARS) return parseBounded(source);
    const query = source;
    let d = this.docs.get(query);
    if (!d) {
      d = parseBounded(query);
      this.docs.set(query, d);
    }
    return d;
  };

  /** Tags a request's rules with what its validation result depends on besides the document. */
  tag(
    rules: readonly ValidationRule[],
    variables: unknown,
    operationName: string | null | undefined,
    sink: CostSink,
    /** what the cost depends on besides (the caller's list sizes, limits.ts costCapsOf) */
    basis = "",
  ): readonly ValidationRule[] {
    this.keys.set(rules, {
      key: `${operationName ?? ""}\u0000${JSON.stringify(variables ?? null)}\u0000${basis}`,
      sink,
    });
    return rules;
  }

  /** The size pre-scan, then graphql-js's validation with the request's rules (the cost into its sink). */
  validate = (
    schema: GraphQLSchema,
    document: DocumentNode,
    rules: readonly ValidationRule[] = specifiedRules,
  ): readonly GraphQLError[] => {
    let pre = this.scanned.get(document);
    if (!pre) {
      pre = prescan(schema, document);
      this.scanned.set(document, pre);
    }
    if (pre.length) return pre;
    const tag = this.keys.get(rules);
    if (tag === undefined || tag.key.length > 4096) return validate(schema, document, rules);
    let per = this.validated.get(document);
    if (!per) {
      per = new LRUCache<string, Validated>({ max: 50 });
      this.validated.set(document, per);
    }
    let v = per.get(tag.key);
    if (!v) {
      v = { errors: validate(schema, document, rules), cost: tag.sink.cost };
      per.set(tag.key, v);
    } else tag.sink.cost = v.cost;
    return v.errors;
  };
}

/** The operation `operationName` picks, or the only one; undefined when ambiguous. */
function operationOf(doc: DocumentNode, operationName: string | null | undefined): OperationDefinitionNode | undefined {
  const ops = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  return operationName ? ops.find((o) => o.name?.value === operationName) : ops.length === 1 ? ops[0] : undefined;
}

/** A query whose root fields all read only the snapshot (fragments at the root are not looked into). */
export function snapshotOnly(doc: DocumentNode, operationName: string | null | undefined): boolean {
  const op = operationOf(doc, operationName);
  return (
    !!op &&
    op.operation === "query" &&
    op.selectionSet.selections.every((s) => s.kind === Kind.FIELD && SNAPSHOT_ONLY_ROOTS.has(s.name.value))
  );
}

/** The media type graphql-http answers with for an Accept header (its own rule), or null. */
export function answeredMediaType(accept: string | undefined): string | null {
  for (const part of (accept || "*/*").replace(/\s/g, "").toLowerCase().split(",")) {
    const [type, ...params] = part.split(";");
    const charset = params.find((p) => p.includes("charset=")) ?? "charset=utf-8";
    if (type === "application/graphql-response+json" && charset === "charset=utf-8") return type;
    if (
      (type === "application/json" || type === "application/*" || type === "*/*") &&
      (charset === "charset=utf-8" || charset === "charset=utf8")
    )
      return "application/json";
  }
  return null;
}

/**
 * The response cache's key of a GraphQL read (without the snapshot id, which AnswerCache holds):
 * the caller's scope set, the answered media type, the document (`h:` + its SHA-256 for a persisted
 * query, else `q:` + its text), operationName and variables. The fast path computes the same key.
 */
export function responseKey(
  scopes: string,
  mediaType: string,
  doc: string,
  operationName: string | null | undefined,
  variables: unknown,
): string | null {
  if (doc.length > MAX_QUERY_CHARS + 2) return null;
  return ["g", scopes, mediaType, operationName ?? "", JSON.stringify(variables ?? null), doc].join("\u0000");
}

/** Whole GraphQL answers in the app's response cache (api/output/answer-cache.ts), per snapshot. */
export class ResponseCache {
  constructor(private readonly answers: AnswerCache) {}
  key(
    scopes: readonly string[],
    mediaType: string,
    doc: string,
    operationName: string | null | undefined,
    variables: unknown,
  ): string | null {
    return responseKey(scopeSet(scopes), mediaType, doc, operationName, variables);
  }
  /** The cached body (without `extensions`) and the query's cost. */
  get(snapshotId: string, key: string): GraphqlAnswer | undefined {
    const a = this.answers.get(snapshotId, key);
    return a?.kind === "graphql" ? a : undefined;
  }
  set(snapshotId: string, key: string, body: string, cost: number): void {
    const b = Buffer.from(body, "utf8");
    if (b.length <= this.answers.maxBodyBytes) this.answers.set(snapshotId, key, { kind: "graphql", body: b, cost });
  }
}

/** Automatic persisted queries (Apollo's protocol): query texts by their SHA-256, bounded by bytes. */
export class PersistedQueries {
  private texts = new LRUCache<string, string>({
    max: 10_000,
    maxSize: 8 * 1024 * 1024,
    sizeCalculation: (s) => Math.max(1, s.length),
  });
  get(hash: string): string | undefined {
    return this.texts.get(hash);
  }
  /** Keeps `query` under `hash` when the hash is the query's; false when it is not. */
  register(hash: string, query: string): boolean {
    if (sha256Hex(query) !== hash) return false;
    if (query.length <= MAX_QUERY_CHARS) this.texts.set(hash, query);
    return true;
  }
}

export const sha256Hex = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

/** A persisted-query extension as sent: `{version: 1, sha256Hash}`; null when malformed. */
export interface PersistedQueryRef {
  version: unknown;
  sha256Hash: string;
}

/** The parameters of a GraphQL request; `query` is absent only for a persisted query sent by its hash. */
export interface GraphqlParams {
  query: string | undefined;
  operationName?: string | null;
  variables?: unknown;
  persisted?: PersistedQueryRef;
}

const isMap = (v: unknown) => v == null || (typeof v === "object" && !Array.isArray(v));

/**
 * The GraphQL parameters of a well-formed request (what graphql-http would accept), for the
 * response cache's key; null for anything else, which graphql-http then answers itself.
 */
export function requestParams(
  method: string,
  contentType: string | undefined,
  body: unknown,
  query: Record<string, unknown>,
): GraphqlParams | null {
  try {
    let p: Record<string, unknown>;
    if (method === "POST") {
      if (!contentType?.startsWith("application/json") || typeof body !== "string" || !body) return null;
      p = JSON.parse(body) as Record<string, unknown>;
      if (!isMap(p)) return null;
    } else {
      p = {
        ...query,
        variables: typeof query.variables === "string" ? JSON.parse(query.variables) : query.variables,
        extensions: typeof query.extensions === "string" ? JSON.parse(query.extensions) : query.extensions,
      };
    }
    if (
      !isMap(p.variables) ||
      !isMap(p.extensions) ||
      !(p.operationName == null || typeof p.operationName === "string")
    )
      return null;
    const pq = (p.extensions as { persistedQuery?: unknown } | undefined)?.persistedQuery;
    const persisted =
      pq && typeof pq === "object" && typeof (pq as PersistedQueryRef).sha256Hash === "string"
        ? (pq as PersistedQueryRef)
        : undefined;
    if (typeof p.query !== "string" && !(p.query === undefined && persisted)) return null;
    return {
      query: p.query as string | undefined,
      operationName: p.operationName as string | null | undefined,
      variables: p.variables,
      persisted,
    };
  } catch {
    return null;
  }
}
