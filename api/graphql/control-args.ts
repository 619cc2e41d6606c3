// Every GraphQL field's arguments (mutation inputs included) are checked for control characters
// before its resolver runs: BAD_USER_INPUT naming the argument (`search`, `input.name`), as the
// REST parameters get a 400 (api/resources/text-input.ts). One wrapper for all fields, so a new
// argument is covered without its own check; the JIT compiles these same resolvers.
import { defaultFieldResolver, type GraphQLFieldResolver, type GraphQLSchema, isObjectType } from "graphql";
import { refuseControls } from "../resources/text-input.ts";

export function refuseControlArgs(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith("__")) continue;
    for (const field of Object.values(type.getFields())) {
      if (!field.args.length) continue;
      const resolve: GraphQLFieldResolver<unknown, unknown> = field.resolve ?? defaultFieldResolver;
      field.resolve = (source, args, ctx, info) => {
        refuseControls(args);
        return resolve(source, args, ctx, info);
      };
    }
  }
  return schema;
}
