// Mutation results: each FieldError is shown beside its field (an element with
// data-error-for="<field>" inside the form), or in the form's general slot.
import type { FieldError } from "./api.ts";
import { h } from "./dom.ts";

export interface Payload {
  success: boolean;
  errors: FieldError[] | null;
}

export function showErrors(form: HTMLElement, errors: FieldError[] | null): void {
  for (const el of form.querySelectorAll<HTMLElement>("[data-error-for]")) el.textContent = "";
  for (const e of errors ?? []) {
    const slot =
      form.querySelector<HTMLElement>(`[data-error-for="${CSS.escape(e.field)}"]`) ??
      form.querySelector<HTMLElement>('[data-error-for="input"]');
    if (slot) slot.textContent = e.messages.join(" ");
  }
}

export const errorSlot = (field: string) => h("span", { class: "field-error", role: "alert", "data-error-for": field });

/** A labelled input with its error slot. */
export function field(label: string, name: string, attrs: Record<string, string | number | boolean> = {}) {
  const id = `${attrs.idPrefix ?? "f"}-${name}`;
  const { idPrefix: _p, ...rest } = attrs;
  return h(
    "div",
    { class: "form-field" },
    h("label", { for: id }, label),
    h("input", { id, name, ...rest }),
    errorSlot(name),
  );
}

/** Runs a mutation from a form: shows its errors, or calls onDone. Top-level errors go to the general slot. */
export async function submit<T extends Payload>(form: HTMLElement, run: () => Promise<T>, onDone: (p: T) => void) {
  try {
    const p = await run();
    showErrors(form, p.errors);
    if (p.success) onDone(p);
  } catch (e) {
    showErrors(form, [{ field: "input", messages: [e instanceof Error ? e.message : String(e)] }]);
  }
}
