// Caches for the GraphQL read path, all bounded:
// - parsed documents per query text (parsed with the token limit), the size pre-scan per document
//   (prescan.ts), and validation results with the operation's cost per (document, variables,
//   operationName): the cost depends on the variables, everything else on the document;
// - whole responses of queries that read only the snapshot (stock ratings, stocks, benchmarks,
//   introspection), per snapshot id and the caller's scopes, like REST's serialized-body LRU.
//   Queries that touch the catalog (portfolios, watchlists, profile) are built per request.
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
import { LruCache } from "../../pipeline/store/snapshot-reader.ts";
import { BodyCache } from "../output/lru.ts";
import type { CostSink } from "./limits.ts";
import { MAX_TOKENS, prescan, tokenLimitError } from "./prescan.ts";

/** Root fields whose whole subtree reads only the published snapshot (or the schema). */
const SNAPSHOT_ONLY_ROOTS = new Set([
  "stockRatings",
  "stock",
  "stocks",
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
  private docs = new LruCache<string, DocumentNode>(500);
  private scanned = new WeakMap<DocumentNode, readonly GraphQLError[]>();
  private validated = new WeakMap<DocumentNode, LruCache<string, Validated>>();
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
  ): readonly ValidationRule[] {
    this.keys.set(rules, { key: `${operationName ?? ""}\u0000${JSON.stringify(variables ?? null)}`, sink });
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
      per = new LruCache<string, Validated>(50);
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

export class ResponseCache {
  private bodies = new BodyCache<{ body: Buffer; cost: number }>(2000, 32 * 1024 * 1024);
  key(
    snapshotId: string,
    scopes: readonly string[],
    mediaType: string,
    query: string,
    operationName: string | null | undefined,
    variables: unknown,
  ): string | null {
    if (query.length > MAX_QUERY_CHARS) return null;
    return [
      snapshotId,
      [...scopes].sort().join(","),
      mediaType,
      operationName ?? "",
      JSON.stringify(variables ?? null),
      query,
    ].join("\u0000");
  }
  /** The cached body (without `extensions`) and the query's cost. */
  get(key: string): { body: Buffer; cost: number } | undefined {
    return this.bodies.get(key);
  }
  set(key: string, body: string, cost: number): void {
    this.bodies.set(key, { body: Buffer.from(body, "utf8"), cost });
  }
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
): { query: string; operationName?: string | null; variables?: unknown } | null {
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
      typeof p.query !== "string" ||
      !isMap(p.variables) ||
      !isMap(p.extensions) ||
      !(p.operationName == null || typeof p.operationName === "string")
    )
      return null;
    return { query: p.query, operationName: p.operationName as string | null | undefined, variables: p.variables };
  } catch {
    return null;
  }
}
