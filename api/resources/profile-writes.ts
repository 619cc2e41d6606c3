// Updating the caller's own profile.
import { z } from "zod";
import type { User } from "../../pipeline/store/catalog/types.ts";
import { singleLine } from "./text-input.ts";
import { fail, fieldErrors, ok, type WriteContext, type WriteResult, writerOf } from "./write-results.ts";

/** A first or last name: trimmed, not empty, at most 100 characters, one line. */
const personName = () =>
  z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(100)
    .refine(...singleLine)
    .optional();

const schema = z.object({
  email: z
    .email("must be an email address")
    .max(254)
    .refine(...singleLine)
    .optional(),
  firstName: personName(),
  lastName: personName(),
  phoneNumber: z
    .string()
    .regex(/^[0-9+()./ -]{3,40}$/, "must be a phone number (digits, spaces, + ( ) - . /)")
    .optional(),
});

export async function updateProfile(
  ctx: WriteContext,
  input: Partial<Record<"email" | "firstName" | "lastName" | "phoneNumber", string | null>>,
): Promise<WriteResult<User>> {
  const parsed = schema.safeParse(Object.fromEntries(Object.entries(input).filter(([, v]) => v != null)));
  if (!parsed.success) return { ok: false, errors: fieldErrors(parsed.error.issues) };
  try {
    return ok(await writerOf(ctx).updateUser(ctx.caller.user.id, parsed.data));
  } catch (e) {
    // the catalog refuses an email another user holds (CatalogError "conflict")
    if ((e as { code?: unknown }).code === "conflict") return fail("email", "is used by another user");
    throw e;
  }
}
