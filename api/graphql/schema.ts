// The GraphQL schema (contract §7), code-first; `npm run graphql-schema` prints it to
// schema.graphql, and a test fails when the committed file drifts from it.
import { GraphQLSchema, lexicographicSortSchema, printSchema } from "graphql";
import { refuseControlArgs } from "./control-args.ts";
import { MutationType } from "./mutations/index.ts";
import { QueryType } from "./query.ts";

let built: GraphQLSchema | undefined;
export function graphqlSchema(): GraphQLSchema {
  built ??= refuseControlArgs(new GraphQLSchema({ query: QueryType, mutation: MutationType }));
  return built;
}

export const printedSchema = () => `${printSchema(lexicographicSortSchema(graphqlSchema()))}\n`;
