// Relay connections (contract §7): edges { cursor node }, pageInfo, totalCount; `first` at most
// 200 (default 50), `after` an opaque cursor. Cursors encode the offset of the node.
import {
  GraphQLBoolean,
  type GraphQLFieldConfigArgumentMap,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  type GraphQLOutputType,
  GraphQLString,
} from "graphql";
import { InvalidParameter } from "../errors.ts";
import type { Page, PageArgs } from "../resources/ordering.ts";
import { inTurn } from "./field-turns.ts";

export const MAX_FIRST = 200;
/** Pages larger than this complete in a turn of the event loop of their own (about 3 ms of nodes). */
const TURN_NODES = 20;
export const DEFAULT_FIRST = 50;

export const PageInfo = new GraphQLObjectType({
  name: "PageInfo",
  fields: {
    hasNextPage: { type: new GraphQLNonNull(GraphQLBoolean) },
    hasPreviousPage: { type: new GraphQLNonNull(GraphQLBoolean) },
    startCursor: { type: GraphQLString },
    endCursor: { type: GraphQLString },
  },
});

export const connectionArgs: GraphQLFieldConfigArgumentMap = {
  first: { type: GraphQLInt, defaultValue: DEFAULT_FIRST, description: `Number of nodes, 0 to ${MAX_FIRST}` },
  after: { type: GraphQLString, description: "Cursor of the node after which the page starts" },
};

const encodeCursor = (offset: number) => Buffer.from(`o:${offset}`).toString("base64url");
function decodeCursor(cursor: string): number {
  const m = /^o:(\d{1,15})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!m) throw InvalidParameter.one("after", "not a cursor of this list");
  return Number(m[1]) + 1;
}

/** first/after → offset and limit; `first` outside 0..200 is an error naming it. */
export function pageArgsOf(args: { first?: number | null; after?: string | null }): PageArgs {
  const first = args.first ?? DEFAULT_FIRST;
  if (!Number.isInteger(first) || first < 0 || first > MAX_FIRST)
    throw InvalidParameter.one("first", `must be an integer from 0 to ${MAX_FIRST}`);
  return { offset: args.after ? decodeCursor(args.after) : 0, limit: first };
}

export interface Connection<T> {
  edges: { cursor: string; node: T }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  totalCount: () => Promise<number>;
}

/**
 * Runs `read` for one more node than asked (to know whether a next page exists) and shapes the
 * result as a connection. totalCount is computed only when the query selects it.
 */
export async function connection<T>(p: PageArgs, read: (p: PageArgs) => Promise<Page<T>>): Promise<Connection<T>> {
  let page = await read({ offset: p.offset, limit: p.limit + 1 });
  // completing a page of nodes runs in one macrotask: a large page gets a turn of its own (field-turns.ts)
  if (p.limit > TURN_NODES) page = await inTurn(undefined, () => page);
  const items = page.items.slice(0, p.limit);
  const edges = items.map((node, i) => ({ cursor: encodeCursor(p.offset + i), node }));
  return {
    edges,
    pageInfo: {
      hasNextPage: page.items.length > p.limit,
      hasPreviousPage: p.offset > 0,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
    totalCount: page.totalCount,
  };
}

/** `<Name>Connection` and `<Name>Edge` types for a node type. */
export function connectionType(name: string, node: GraphQLOutputType): GraphQLObjectType {
  const edge = new GraphQLObjectType({
    name: `${name}Edge`,
    fields: { cursor: { type: new GraphQLNonNull(GraphQLString) }, node: { type: new GraphQLNonNull(node) } },
  });
  return new GraphQLObjectType({
    name: `${name}Connection`,
    fields: {
      edges: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(edge))) },
      pageInfo: { type: new GraphQLNonNull(PageInfo) },
      totalCount: { type: new GraphQLNonNull(GraphQLInt), resolve: (c: Connection<unknown>) => c.totalCount() },
    },
  });
}

/** Cost of a connection field for the complexity limit: its nodes times their selection. */
export const connectionCost = ({ args, childComplexity }: { args: Record<string, unknown>; childComplexity: number }) =>
  1 + (typeof args.first === "number" ? Math.max(1, Math.min(args.first, MAX_FIRST)) : DEFAULT_FIRST) * childComplexity;
