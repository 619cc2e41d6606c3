// What tools nobody here wrote need of the OpenAPI document beyond what each route gives (issue #40):
// tuples that draft-07 and draft 2020-12 validators read alike, the 431 every path may answer, an
// example for every path parameter (Dredd and mock servers build requests from them), and the
// paging headers. Applied to every operation, so a route added later gets them too.
import { MAX_HEADER_BYTES } from "./client-error.ts";

type Json = Record<string, unknown>;

export const PAGING_HEADERS: Json = {
  "X-Total-Count": { description: "Items in the whole list", schema: { type: "integer", minimum: 0 } },
  Link: {
    description:
      'RFC 8288: rel="next" and rel="prev" where such a page exists; relative to this server, the request\'s ' +
      "parameters sorted with offset replaced, never api_key",
    schema: { type: "string" },
  },
};

/** An example value for a path parameter that the parameter's schema accepts. */
function pathExample(path: string, param: Json): string {
  const schema = (param.schema ?? {}) as Json;
  if (Array.isArray(schema.enum)) return String(schema.enum[0]);
  if (param.name === "ticker") return "AAPL";
  if (path.includes("/webhooks/")) return "wh_1";
  if (path.includes("/watchlist")) return "1";
  return "101"; // the predefined portfolio of the generated sample and the tests' fixture
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * `prefixItems` (2020-12) is unknown to draft-07, which then reads `items: false` as "no items at
 * all": a tuple whose members share one schema is written as `items` with a fixed length instead,
 * read alike by both.
 */
function draftNeutral(node: unknown): void {
  if (Array.isArray(node)) {
    for (const x of node) draftNeutral(x);
    return;
  }
  if (node === null || typeof node !== "object") return;
  const o = node as Json;
  const tuple = o.prefixItems;
  if (Array.isArray(tuple) && tuple.length > 0 && tuple.every((t) => same(t, tuple[0]))) {
    delete o.prefixItems;
    o.items = tuple[0];
    o.minItems = tuple.length;
    o.maxItems = tuple.length;
  }
  for (const v of Object.values(o)) draftNeutral(v);
}

export function forConsumerTools(paths: Record<string, Json>, schemas: Json, errorRef: Json): void {
  for (const [path, item] of Object.entries(paths))
    for (const op of Object.values(item) as Json[]) {
      const responses = op.responses as Json;
      responses["431"] ??= {
        description: `Request head (URL and headers) over ${MAX_HEADER_BYTES / 1024} KB, refused before routing`,
        content: { "application/json": { schema: errorRef } },
      };
      for (const p of (op.parameters ?? []) as Json[])
        if (p.in === "path" && p.example === undefined) p.example = pathExample(path, p);
    }
  draftNeutral(paths);
  draftNeutral(schemas);
}
