// OpenAPI 3.1 document generated from the route list and its zod schemas (no second hand-written copy).
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { z } from "zod";
import { EXPORT_TABLE_NAMES } from "../pipeline/store/read/export-tables.ts";
import { ENDPOINT_SCOPES } from "./auth.ts";
import { MAX_HEADER_BYTES } from "./client-error.ts";
import { COST_PER_MINUTE, MAX_COST, MAX_RESPONSE_BYTES, TIMEOUT_MS } from "./graphql/cost.ts";
import { MAX_DEPTH } from "./graphql/limits.ts";
import { DOCUMENT_LIMITS, MAX_TOKENS } from "./graphql/prescan.ts";
import { forConsumerTools, PAGING_HEADERS } from "./openapi-consumers.ts";
import { ARROW_STREAM_TYPE } from "./output/arrow.ts";
import { RESOURCE_SCOPES } from "./resources/scopes.ts";
import { EXPORT_SCOPES, exportQuery } from "./rest/export-query.ts";
import { ErrorSchema } from "./rest/resources.ts";
import type { AnyRoute } from "./rest/route.ts";
import { withFormat } from "./rest/route.ts";
import {
  deliveriesQuery,
  WebhookDeliverySchema,
  WebhookSchema,
  webhookIdParam,
  webhooksQuery,
} from "./rest/webhooks.ts";

type Json = Record<string, unknown>;

/** package.json's version, the service's one version number (found from api/ and from dist/api/). */
function packageVersion(): string {
  for (let d = import.meta.dirname; ; d = dirname(d)) {
    const p = join(d, "package.json");
    if (existsSync(p)) return (JSON.parse(readFileSync(p, "utf8")) as { version: string }).version;
    if (dirname(d) === d) throw new Error(`no package.json above ${import.meta.dirname}`);
  }
}

function jsonSchema(s: z.ZodType, io: "input" | "output", defs: Json): Json {
  const raw = z.toJSONSchema(s, { io, target: "draft-2020-12", unrepresentable: "any", reused: "inline" });
  const out = JSON.parse(JSON.stringify(raw).replaceAll('"#/$defs/', '"#/components/schemas/')) as Json;
  delete out.$schema;
  // lift named component schemas ($defs, from .meta({id})) into components.schemas
  const local = out.$defs as Json | undefined;
  if (local) {
    Object.assign(defs, local);
    delete out.$defs;
  }
  return out;
}

const n = (x: number) => x.toLocaleString("en-US");

/** The limits a client meets, from the constants that enforce them (docs/api/limits.md has the prose). */
const LIMITS = [
  "Limits. REST: requests per api key per minute as the server's RATE_LIMIT_PER_MINUTE (default 6,000; 429",
  `with Retry-After over it); a request head (URL and headers) of at most ${n(MAX_HEADER_BYTES / 1024)} KB (431);`,
  "any parameter holding a control character (U+0000-U+001F, U+007F; a description may hold tab, LF, CR) is a",
  "400 naming it. GraphQL (/graphiql, described in its schema): a document of at most",
  `${n(MAX_TOKENS)} tokens, ${n(DOCUMENT_LIMITS.fields)} fields, ${n(DOCUMENT_LIMITS.aliases)} aliases,`,
  `depth ${MAX_DEPTH}; a request may cost ${n(MAX_COST)} points and a key ${n(COST_PER_MINUTE)} points a minute`,
  `(extensions.cost reports the budget); execution stops at ${TIMEOUT_MS / 1000} s and an answer over`,
  `${MAX_RESPONSE_BYTES / 1024 / 1024} MiB is refused.`,
].join(" ");

const API_KEY_PARAM = {
  name: "api_key",
  in: "query",
  required: false,
  description: "API key (or header api_key); required one way or the other",
  schema: { type: "string" },
};
const BINARY = { schema: { type: "string", format: "binary" } };

/** A query schema's parameters (description lifted from each parameter's schema). */
function queryParameters(shape: Record<string, z.ZodType>, schemas: Json): Json[] {
  const out: Json[] = [];
  for (const [name, schema] of Object.entries(shape)) {
    const js = jsonSchema(schema, "input", schemas);
    const description = js.description as string | undefined;
    delete js.description;
    const optional = schema.safeParse(undefined).success;
    out.push({ name, in: "query", required: !optional, ...(description ? { description } : {}), schema: js });
  }
  return out;
}

const ERRORS: Record<string, string> = {
  "400": "Bad or missing parameter",
  "401": "Absent or unknown api_key",
  "403": "The key lacks a scope (the message names it)",
  "404": "Unknown ticker or id, or a private object of another user",
  "429": "Over the rate limit (Retry-After)",
  "503": "No snapshot published yet",
};

/** A REST route's GET operation: its parameters from its zod schemas, its responses in every format. */
function routeOperation(r: AnyRoute, schemas: Json, errorRef: Json): Json {
  const query = withFormat(r.query);
  const parameters: Json[] = [];
  for (const [name, description] of Object.entries(r.pathParams ?? {}))
    parameters.push({ name, in: "path", required: true, description, schema: { type: "string" } });
  const paged = "limit" in query.shape && "offset" in query.shape;
  parameters.push(API_KEY_PARAM, ...queryParameters(query.shape as Record<string, z.ZodType>, schemas));
  const responses: Json = {
    "200": {
      description: "OK",
      headers: { ETag: { schema: { type: "string" } }, ...(paged ? PAGING_HEADERS : {}) },
      content: {
        "application/json": { schema: jsonSchema(r.response, "output", schemas) },
        "text/csv": { schema: { type: "string" } },
        [ARROW_STREAM_TYPE]: BINARY,
      },
    },
    "304": { description: "Not modified (If-None-Match)" },
  };
  for (const [code, description] of Object.entries(ERRORS))
    responses[code] = { description, content: { "application/json": { schema: errorRef } } };
  const scopes = ENDPOINT_SCOPES[r.endpoint] as readonly string[];
  return {
    operationId: r.id,
    summary: r.summary,
    tags: [r.endpoint],
    description: scopes.length ? `Requires scopes: ${scopes.join(", ")}.` : "Any valid key.",
    "x-required-scopes": scopes,
    security: [{ apiKeyQuery: [] }, { apiKeyHeader: [] }],
    parameters,
    responses,
  };
}

export function openApiDocument(routes: AnyRoute[]): Json {
  const schemas: Json = {};
  const paths: Record<string, Json> = {};
  const errorRef = { $ref: "#/components/schemas/Error" };
  jsonSchema(ErrorSchema, "output", schemas); // registers components.schemas.Error
  for (const r of routes)
    paths[`/data/v1${r.path.replace(/:([A-Za-z_]+)/g, "{$1}")}`] = { get: routeOperation(r, schemas, errorRef) };
  paths["/data/v1/export/{table}"] = exportOperation(schemas, errorRef);
  Object.assign(paths, webhookOperations(schemas, errorRef));
  forConsumerTools(paths, schemas, errorRef);
  return {
    openapi: "3.1.0",
    info: {
      title: "Stock ratings and portfolio data service",
      version: packageVersion(),
      description: LIMITS,
      // package.json: private, no license file; a validator's consumer still asks which terms apply
      license: { name: "Proprietary: no license is granted", identifier: "LicenseRef-Proprietary" },
    },
    // relative: the server that serves this document (paths carry the /data/v1 prefix)
    servers: [{ url: "/", description: "this server" }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        apiKeyQuery: { type: "apiKey", in: "query", name: "api_key" },
        apiKeyHeader: { type: "apiKey", in: "header", name: "api_key" },
      },
    },
  };
}

/** GET /data/v1/webhooks and /data/v1/webhooks/{id}/deliveries (api/rest/webhooks.ts). */
function webhookOperations(schemas: Json, errorRef: Json): Record<string, Json> {
  const op = (id: string, summary: string, query: z.ZodObject, item: z.ZodType, pathParams: Json[]) => {
    const responses: Json = {
      "200": {
        description: "OK",
        headers: { ETag: { schema: { type: "string" } } },
        content: { "application/json": { schema: jsonSchema(z.array(item), "output", schemas) } },
      },
      "304": { description: "Not modified (If-None-Match)" },
    };
    for (const [code, description] of Object.entries(ERRORS))
      responses[code] = {
        description: code === "503" ? "Webhooks are not enabled on this server" : description,
        content: { "application/json": { schema: errorRef } },
      };
    return {
      get: {
        operationId: id,
        summary,
        tags: ["webhooks"],
        description: `Requires scopes: ${RESOURCE_SCOPES.webhooks.join(", ")}. The caller's own webhooks only.`,
        "x-required-scopes": RESOURCE_SCOPES.webhooks,
        security: [{ apiKeyQuery: [] }, { apiKeyHeader: [] }],
        parameters: [
          ...pathParams,
          API_KEY_PARAM,
          ...queryParameters(query.shape as Record<string, z.ZodType>, schemas),
        ],
        responses,
      },
    };
  };
  const idParam = {
    name: "id",
    in: "path",
    required: true,
    description: "Webhook id",
    schema: jsonSchema(webhookIdParam, "input", schemas),
  };
  return {
    "/data/v1/webhooks": op("webhooks_list", "The caller's webhooks", webhooksQuery, WebhookSchema, []),
    "/data/v1/webhooks/{id}/deliveries": op(
      "webhook_deliveries",
      "A webhook's deliveries, newest first",
      deliveriesQuery,
      WebhookDeliverySchema,
      [idParam],
    ),
  };
}

/** GET /data/v1/export/{table}: one snapshot table, streamed (api/rest/export.ts). */
function exportOperation(schemas: Json, errorRef: Json): Json {
  const scopes = EXPORT_TABLE_NAMES.map((t) => `${t}: ${EXPORT_SCOPES[t].join(" + ")}`).join("; ");
  const responses: Json = {
    "200": {
      description: "The table's rows: an Arrow IPC stream (format=arrow) or one Parquet file (format=parquet)",
      headers: { ETag: { schema: { type: "string" } } },
      content: { [ARROW_STREAM_TYPE]: BINARY, "application/vnd.apache.parquet": BINARY },
    },
    "304": { description: "Not modified (If-None-Match): the snapshot has not changed" },
  };
  for (const [code, description] of Object.entries(ERRORS))
    responses[code] = {
      description:
        code === "400"
          ? `${description} (an unknown table among them, named table)`
          : code === "404"
            ? "A ticker of tickers the snapshot does not have (the message names it)"
            : code === "503"
              ? `${description}, or the server streams as many exports as it runs at once (EXPORT_MAX_CONCURRENT; ` +
                "Retry-After)"
              : description,
      content: { "application/json": { schema: errorRef } },
    };
  return {
    get: {
      operationId: "export_table",
      summary: "Bulk export of a snapshot table (Arrow IPC stream or Parquet)",
      tags: ["export"],
      description:
        "Typed columns as stored in the snapshot (docs/data/snapshot.md): dates as dates, numbers as float64 or " +
        `int32. Portfolio tables hold the predefined portfolios and the caller's own. Scopes per table: ${scopes}.`,
      "x-required-scopes": Object.fromEntries(EXPORT_TABLE_NAMES.map((t) => [t, EXPORT_SCOPES[t]])),
      security: [{ apiKeyQuery: [] }, { apiKeyHeader: [] }],
      parameters: [
        {
          name: "table",
          in: "path",
          required: true,
          description: "The table",
          schema: { type: "string", enum: EXPORT_TABLE_NAMES },
        },
        API_KEY_PARAM,
        ...queryParameters(exportQuery.shape as Record<string, z.ZodType>, schemas),
      ],
      responses,
    },
  };
}
