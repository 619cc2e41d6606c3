// The app is a plain client of the public interface: REST GETs under /data/v1 and GraphQL POSTs
// to /graphiql, the key in the api_key header (never in a URL), kept in sessionStorage until the
// tab closes.
const KEY_ITEM = "stock-ratings.api-key";

export const keyStore = {
  get: (): string | null => sessionStorage.getItem(KEY_ITEM),
  set: (k: string) => sessionStorage.setItem(KEY_ITEM, k),
  clear: () => sessionStorage.removeItem(KEY_ITEM),
};

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Called on a 401: the stored key is no longer good. */
let onUnauthorized: () => void = () => {};
export const setOnUnauthorized = (f: () => void) => {
  onUnauthorized = f;
};

type Params = Record<string, string | number | boolean | undefined | null>;

function url(path: string, params: Params): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  const s = q.toString();
  return `/data/v1/${path}${s ? `?${s}` : ""}`;
}

async function get(path: string, params: Params): Promise<Response> {
  const r = await fetch(url(path, params), { headers: { api_key: keyStore.get() ?? "" } });
  if (r.ok) return r;
  const body = await r.json().catch(() => null);
  if (r.status === 401) onUnauthorized();
  const e = body?.error;
  throw new ApiError(r.status, e?.code ?? "error", e?.message ?? `${r.status} ${r.statusText}`);
}

export async function rest<T>(path: string, params: Params = {}): Promise<T> {
  return (await get(path, params)).json() as Promise<T>;
}

export type DownloadFormat = "csv" | "arrow";

/**
 * A REST read in CSV or Arrow form, saved as a file: fetched with the key in its header, then handed
 * to an <a download> through a blob: URL (so no key is in any URL), revoked once the click is taken.
 */
export async function download(path: string, params: Params, format: DownloadFormat, filename: string): Promise<void> {
  const blob = await (await get(path, { ...params, format })).blob();
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  // the browser reads the blob after the click returns: revoking at once can cancel the save
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

export interface FieldError {
  field: string;
  messages: string[];
}

/** A GraphQL operation; a top-level error (401, a missing scope, bad input) is thrown. */
export async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const r = await fetch("/graphiql", {
    method: "POST",
    headers: { api_key: keyStore.get() ?? "", "content-type": "application/json" },
    body: JSON.stringify({ query, variables }),
  });
  if (r.status === 401) onUnauthorized();
  const body = await r.json().catch(() => null);
  const err = body?.errors?.[0];
  if (err) throw new ApiError(r.status, err.extensions?.code ?? "error", err.message);
  if (!r.ok || !body?.data) throw new ApiError(r.status, "error", `${r.status} ${r.statusText}`);
  return body.data as T;
}
