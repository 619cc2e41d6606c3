// The caller's profile: the key's user.
import type { ReadContext } from "./context.ts";

export function profileOf(ctx: Pick<ReadContext, "caller" | "catalog">) {
  const u = ctx.catalog.getUser(ctx.caller.user.id) ?? ctx.caller.user; // the mirror holds the latest write
  return { id: u.id, email: u.email, firstName: u.firstName, lastName: u.lastName, phoneNumber: u.phoneNumber };
}
