// The paging headers of a list answer, on every format (issue #40): X-Total-Count, the number of
// items the whole list holds, and an RFC 8288 Link with rel="next" and rel="prev" where there is
// such a page. The links are relative to the server (the request's own path) and carry the request's
// parameters, sorted, with offset replaced; never api_key: a key is not echoed into a header a log or
// a proxy may keep (a caller adds it back, or sends it as the api_key header).
import querystring from "node:querystring";

export interface PageWindow {
  limit: number;
  offset: number;
}

/** A page's window when the route's parameters have one (limit and offset both numbers). */
export function pageWindow(params: Record<string, unknown>): PageWindow | null {
  const { limit, offset } = params;
  return typeof limit === "number" && typeof offset === "number" ? { limit, offset } : null;
}

// anything a header value or a <URI-reference> cannot carry as is: percent-encoded
const UNSAFE = /[^\x21-\x7e]|[<>"]/g;
const safe = (s: string) => s.replace(UNSAFE, (c) => encodeURIComponent(c));
const nameOf = (part: string) => {
  const eq = part.indexOf("=");
  const raw = eq < 0 ? part : part.slice(0, eq);
  try {
    return querystring.unescape(raw.replace(/\+/g, " "));
  } catch {
    return raw;
  }
};

export function pagingHeaders(url: string, page: PageWindow, total: number): Record<string, string> {
  const q = url.indexOf("?");
  const path = safe(q < 0 ? url : url.slice(0, q));
  const kept = (q < 0 ? [] : url.slice(q + 1).split("&"))
    .filter((part) => part !== "" && nameOf(part) !== "api_key" && nameOf(part) !== "offset")
    .map(safe)
    .sort();
  const at = (offset: number) => `<${path}?${[...kept, `offset=${offset}`].join("&")}>`;
  const links: string[] = [];
  if (page.offset + page.limit < total) links.push(`${at(page.offset + page.limit)}; rel="next"`);
  if (page.offset > 0) links.push(`${at(Math.max(0, Math.min(page.offset, total) - page.limit))}; rel="prev"`);
  return { "X-Total-Count": String(total), ...(links.length ? { Link: links.join(", ") } : {}) };
}
