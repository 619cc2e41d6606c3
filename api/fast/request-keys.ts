// The fast path's cache keys, computed from the raw request without Express: the REST key is the
// path and the query's parameters sorted (Express's "simple" parser gives the same object for any
// order), api_key taken out; the GraphQL key is that of a persisted query sent by GET (api/graphql/cache.ts
// responseKey). Anything these cannot read as Express would (encoded parameter names, a repeated or
// empty api_key, more parameters than the parser keeps) is left to Express.
import querystring from "node:querystring";
import { answeredMediaType, responseKey } from "../graphql/cache.ts";
import { wantsIde } from "../graphql/ide.ts";

/** node:querystring keeps at most this many parameters (Express's "simple" parser uses it). */
const MAX_PARAMS = 1000;

const decodeValue = (v: string) => querystring.unescape(v.indexOf("+") < 0 ? v : v.replace(/\+/g, " "));

/** A REST request's normalised form and its api_key query parameter (undefined when absent); null: Express reads it. */
export function restRequestKey(url: string): { norm: string; queryKey: string | undefined } | null {
  const q = url.indexOf("?");
  if (q < 0) return { norm: url, queryKey: undefined };
  const parts = url.slice(q + 1).split("&");
  if (parts.length > MAX_PARAMS) return null;
  const kept: string[] = [];
  let key: string | undefined;
  for (const part of parts) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const name = eq < 0 ? part : part.slice(0, eq);
    if (name.indexOf("%") >= 0 || name.indexOf("+") >= 0) return null;
    if (name !== "api_key") kept.push(part);
    else {
      if (key !== undefined || eq < 0) return null; // repeated or empty: Express answers 401
      key = decodeValue(part.slice(eq + 1));
      if (key === "") return null;
    }
  }
  kept.sort();
  return { norm: kept.length === 0 ? url.slice(0, q) : `${url.slice(0, q)}?${kept.join("&")}`, queryKey: key };
}

/** A persisted query sent by GET, as its parts of the response cache key (without the scope set). */
interface PersistedGet {
  mediaType: string;
  doc: string;
  operationName: string | undefined;
  variables: unknown;
}

function parsePersistedGet(raw: string, mediaType: string): PersistedGet | null {
  const p = querystring.parse(raw);
  if (p.query !== undefined || typeof p.extensions !== "string") return null;
  const { variables, operationName } = p;
  if (!(variables === undefined || typeof variables === "string")) return null;
  if (!(operationName === undefined || typeof operationName === "string")) return null;
  try {
    const ext = JSON.parse(p.extensions) as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | null;
    const pq = ext?.persistedQuery;
    if (pq?.version !== 1 || typeof pq.sha256Hash !== "string") return null;
    const vars = variables === undefined ? undefined : (JSON.parse(variables) as unknown);
    if (vars !== undefined && vars !== null && (typeof vars !== "object" || Array.isArray(vars))) return null;
    return { mediaType, doc: `h:${pq.sha256Hash}`, operationName, variables: vars };
  } catch {
    return null;
  }
}

/** A persisted GET's response cache key and the media type it is answered in. */
export interface PersistedKey {
  key: string;
  mediaType: string;
}

/** The response cache key of a GET /graphiql?extensions=… persisted query for a scope set; null: Express serves it. */
export function persistedGetKey(url: string, accept: string | undefined, scopes: string): PersistedKey | null {
  const q = url.indexOf("?");
  if (q < 0 || wantsIde(accept)) return null;
  const mediaType = answeredMediaType(accept);
  if (mediaType === null) return null;
  const g = parsePersistedGet(url.slice(q + 1), mediaType);
  const key = g && responseKey(scopes, g.mediaType, g.doc, g.operationName, g.variables);
  return key ? { key, mediaType } : null;
}

/** Memos hold this many raw URLs at most (then start again), each of at most MEMO_URL_CHARS. */
const MEMO_MAX = 1000;
const MEMO_URL_CHARS = 4096;

/** What a raw persisted GET gives for the Accept header and scope set it last came with. */
interface PersistedMemo {
  accept: string | undefined;
  scopes: string;
  key: PersistedKey | null;
}

/**
 * persistedGetKey remembered per raw URL (with the Accept header and scope set it was computed
 * for): a repeated persisted GET parses no JSON and builds no key, as a REST hit.
 */
export class PersistedKeys {
  private memo = new Map<string, PersistedMemo>();
  of(url: string, accept: string | undefined, scopes: string): PersistedKey | null {
    const m = this.memo.get(url);
    if (m !== undefined && m.accept === accept && m.scopes === scopes) return m.key;
    const key = persistedGetKey(url, accept, scopes);
    if (url.length > MEMO_URL_CHARS) return key;
    if (this.memo.size >= MEMO_MAX) this.memo.clear();
    this.memo.set(url, { accept, scopes, key });
    return key;
  }
}

/** A REST request's normalised form, with its cache key for the scope set it last came with. */
export class RestKey {
  private scopes: string | undefined;
  private key = "";
  constructor(
    readonly norm: string,
    readonly queryKey: string | undefined,
  ) {}
  /** The response cache key for a key's scope set (the same string again for the same set). */
  cacheKey(scopes: string): string {
    if (scopes !== this.scopes) {
      this.key = `r\u0000${scopes}\u0000${this.norm}`;
      this.scopes = scopes;
    }
    return this.key;
  }
}

/** restRequestKey remembered per raw URL: a repeated read splits and sorts nothing. */
export class RestKeys {
  private memo = new Map<string, RestKey | null>();
  of(url: string): RestKey | null {
    let k = this.memo.get(url);
    if (k !== undefined) return k;
    const r = restRequestKey(url);
    k = r && new RestKey(r.norm, r.queryKey);
    if (url.length > MEMO_URL_CHARS) return k;
    if (this.memo.size >= MEMO_MAX) this.memo.clear();
    this.memo.set(url, k);
    return k;
  }
}
