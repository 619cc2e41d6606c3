// The request's admission, one gate for every transport (REST routes, GraphQL, the fast path), in the
// style of graphql-http's handler(req) → [body, init]: framework-free, it takes what the transport read
// off its request (the presented key, the client's address, the scopes the endpoint needs) and answers
// the caller, or the refusal the transport sends. One order everywhere: the failed-auth throttle (429),
// the key's caller (401, counted against the address), the rate limit (429), the scopes (403).
// What depends on the operation (GraphQL's field scopes and cost budget) stays with its transport.
import type { CatalogReader, Scope } from "../pipeline/store/catalog/types.ts";
import { authenticate, type Caller, findCaller, requireScopes } from "./auth.ts";
import type { AuthGuard } from "./auth-failures.ts";
import { ApiError, Unauthorized } from "./errors.ts";
import type { Limiter, RateHeaders } from "./rate-limit.ts";

export interface GateEnv {
  catalog: CatalogReader;
  limiter: Limiter | null;
  /** Failed authentications per client address; null: not limited. */
  authGuard?: AuthGuard | null;
}

/** What a transport read off its request. */
export interface Knock {
  /** The presented key; undefined when absent or malformed. */
  key: string | undefined;
  /** The client's address (api/client-address.ts), for the failed-auth throttle. */
  address: string | undefined;
  /** The scopes the endpoint needs, when the transport knows them before it runs. */
  scopes?: readonly Scope[];
}

export type Admission =
  | { caller: Caller; rate: RateHeaders | undefined; refusal?: undefined }
  /** `rate`: the limit's headers, which a refusal after the rate limit carries too. */
  | { refusal: ApiError; rate?: RateHeaders };

/** The caller of `knock`, or the refusal to send (an error other than an ApiError is thrown, not refused). */
export async function admit(env: GateEnv, knock: Knock): Promise<Admission> {
  let caller: Caller;
  try {
    caller = identify(env, knock);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    if (!(env.authGuard && e instanceof Unauthorized)) return { refusal: e };
    // every unknown key counts against the address; the one over the limit is refused with 429 instead
    return env.authGuard.fail(knock.address, e).catch((r: unknown) => refused(r));
  }
  let rate: RateHeaders | undefined;
  try {
    rate = env.limiter ? await env.limiter(caller.key.id) : undefined;
    if (knock.scopes) requireScopes(caller, knock.scopes);
  } catch (e) {
    return refused(e, rate);
  }
  return { caller, rate };
}

/**
 * The caller of `knock` when the gate lets it through without a refusal to send and without waiting
 * (the failed-auth throttle and the key; the fast path's synchronous check): null when the transport
 * behind must answer (a refusal, or an unknown key to count).
 */
export function knownCaller(env: GateEnv, knock: Knock): Caller | null {
  if (knock.key === undefined) return null;
  if (env.authGuard)
    try {
      env.authGuard.check(knock.address);
    } catch {
      return null;
    }
  return findCaller(knock.key, env.catalog);
}

/** The throttle, then the key's caller (throws the refusal). */
function identify(env: GateEnv, knock: Knock): Caller {
  env.authGuard?.check(knock.address);
  return authenticate(knock.key, env.catalog);
}

function refused(e: unknown, rate?: RateHeaders): Admission {
  if (!(e instanceof ApiError)) throw e;
  return rate ? { refusal: e, rate } : { refusal: e };
}
