// Scopes on GraphQL fields: a field config names the resource it reads (resources/scopes.ts);
// a key lacking one of its scopes gets an error on that field (data stays for the rest):
// message naming the scopes, extensions {code: "FORBIDDEN", requiredScopes, missingScopes}.
import { defaultFieldResolver, GraphQLError, type GraphQLFieldConfig } from "graphql";
import type { Scope } from "../../pipeline/store/catalog/types.ts";
import { missingScopes, RESOURCE_SCOPES, type ResourceName } from "../resources/scopes.ts";
import type { GqlContext } from "./context.ts";

export class ScopeError extends GraphQLError {
  constructor(required: readonly Scope[], missing: Scope[]) {
    super(
      `the api key lacks the scope${missing.length > 1 ? "s" : ""} ${missing.join(", ")} (this field ` +
        `needs ${required.join(", ")})`,
      {
        extensions: { code: "FORBIDDEN", requiredScopes: [...required], missingScopes: missing },
      },
    );
  }
}

/** The field, guarded by the scopes of `resource`. */
// biome-ignore lint/suspicious/noExplicitAny: the default of graphql-js's own GraphQLFieldConfig args parameter
export function scoped<S, A = any>(
  resource: ResourceName,
  field: GraphQLFieldConfig<S, GqlContext, A>,
): GraphQLFieldConfig<S, GqlContext, A> {
  const required: readonly Scope[] = RESOURCE_SCOPES[resource];
  if (required.length === 0) return field;
  const resolve = field.resolve ?? defaultFieldResolver;
  const note = `Needs scope${required.length > 1 ? "s" : ""} ${required.join(", ")}.`;
  return {
    ...field,
    description: field.description ? `${field.description} ${note}` : note,
    extensions: { ...field.extensions, scopes: required },
    resolve(source, args, ctx, info) {
      const missing = missingScopes(ctx.caller.key.scopes, required);
      if (missing.length) throw new ScopeError(required, missing);
      return resolve(source, args, ctx, info);
    },
  };
}
