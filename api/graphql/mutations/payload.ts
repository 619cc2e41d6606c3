// Mutations follow `fooBar(input: FooBarInput!): FooBarPayload` with payload
// {success, errors: [{field, messages}] | null, clientMutationId, ...objects}.
import {
  GraphQLBoolean,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigMap,
  type GraphQLInputFieldConfigMap,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
} from "graphql";
import type { ResourceName } from "../../resources/scopes.ts";
import type { WriteResult } from "../../resources/write-results.ts";
import type { GqlContext } from "../context.ts";
import { scoped } from "../scopes.ts";

export const FieldErrorType = new GraphQLObjectType({
  name: "FieldError",
  fields: {
    field: {
      type: new GraphQLNonNull(GraphQLString),
      description: 'Input field the messages are about ("input" for the whole input)',
    },
    messages: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(GraphQLString))) },
  },
});

type Outputs<T> = {
  [k: string]: { type: GraphQLFieldConfig<unknown, GqlContext>["type"]; value: (v: T, ctx: GqlContext) => unknown };
};

// biome-ignore lint/suspicious/noExplicitAny: inputs are interfaces without an index signature (unknown rejects them)
export function mutation<I extends Record<string, any>, T>(def: {
  name: string;
  description: string;
  scopes: ResourceName;
  input: GraphQLInputFieldConfigMap;
  outputs: Outputs<T>;
  run: (ctx: GqlContext, input: I) => Promise<WriteResult<T>>;
}): GraphQLFieldConfig<unknown, GqlContext> {
  const cap = def.name[0].toUpperCase() + def.name.slice(1);
  const input = new GraphQLInputObjectType({
    name: `${cap}Input`,
    fields: { ...def.input, clientMutationId: { type: GraphQLString } },
  });
  const outFields: GraphQLFieldConfigMap<Record<string, unknown>, GqlContext> = {
    success: { type: new GraphQLNonNull(GraphQLBoolean) },
    errors: { type: new GraphQLList(new GraphQLNonNull(FieldErrorType)), description: "null on success" },
    clientMutationId: { type: GraphQLString },
  };
  for (const [k, o] of Object.entries(def.outputs)) outFields[k] = { type: o.type as GraphQLObjectType };
  const payload = new GraphQLObjectType({ name: `${cap}Payload`, fields: outFields });
  return scoped(def.scopes, {
    type: payload,
    description: def.description,
    args: { input: { type: new GraphQLNonNull(input) } },
    async resolve(_s, args: { input: I & { clientMutationId?: string | null } }, ctx) {
      const r = await def.run(ctx, args.input);
      const clientMutationId = args.input.clientMutationId ?? null;
      if (!r.ok)
        return {
          success: false,
          errors: r.errors,
          clientMutationId,
          ...Object.fromEntries(Object.keys(def.outputs).map((k) => [k, null])),
        };
      const out: Record<string, unknown> = { success: true, errors: null, clientMutationId };
      for (const [k, o] of Object.entries(def.outputs)) out[k] = await o.value(r.value, ctx);
      return out;
    },
  });
}
