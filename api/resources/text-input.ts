// Control characters in input: every text value a client sends (REST query and path parameters,
// GraphQL arguments and mutation inputs) is refused with a 400 / BAD_USER_INPUT naming the
// parameter when it holds a C0 control character (U+0000–U+001F) or DEL (U+007F). Free text that
// may span lines (a description) keeps tab, line feed and carriage return. NUL is refused
// everywhere: no stored or echoed value carries one (api/README.md, "Control characters").
import { z } from "zod";
import { InvalidParameter } from "../errors.ts";

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROLS = /[\u0000-\u001f\u007f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: as above, tab, LF and CR left out
const CONTROLS_BUT_LINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/** Field names whose text may span lines: tab, LF and CR allowed. */
export const MULTILINE_FIELDS: ReadonlySet<string> = new Set(["description"]);

export const CONTROL_MESSAGE = "must not contain control characters (U+0000–U+001F, U+007F)";
export const MULTILINE_MESSAGE =
  "must not contain control characters (U+0000–U+001F, U+007F) other than tab, line feed and carriage return";

/** Whether `s` holds a control character not allowed in a field of this kind. */
export const hasControl = (s: string, multiline = false) => (multiline ? CONTROLS_BUT_LINES : CONTROLS).test(s);

/**
 * The first value in `value` (a string, or arrays and plain objects of them, as a parsed query or
 * GraphQL arguments give) holding a control character its field may not hold: its dotted path
 * and the message; null when there is none. A field's name decides whether it is multi-line.
 */
export function controlIn(value: unknown, path: string, field = path): { param: string; message: string } | null {
  if (typeof value === "string") {
    const multiline = MULTILINE_FIELDS.has(field);
    return hasControl(value, multiline)
      ? { param: path, message: multiline ? MULTILINE_MESSAGE : CONTROL_MESSAGE }
      : null;
  }
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const hit = controlIn(v, `${path}[${i}]`, field);
      if (hit) return hit;
    }
    return null;
  }
  if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (hasControl(k)) return { param: path, message: CONTROL_MESSAGE };
      const hit = controlIn(v, path ? `${path}.${k}` : k, k);
      if (hit) return hit;
    }
  }
  return null;
}

/** Zod refinement arguments: a single-line text field, or a multi-line one (`description`). */
export const singleLine = [(s: string) => !hasControl(s), { message: CONTROL_MESSAGE }] as const;
export const multiLine = [(s: string) => !hasControl(s, true), { message: MULTILINE_MESSAGE }] as const;

/** Throws InvalidParameter (400 / BAD_USER_INPUT) naming the first parameter holding a control character. */
export function refuseControls(params: Record<string, unknown>): void {
  const hit = controlIn(params, "");
  if (hit) throw InvalidParameter.one(hit.param, hit.message);
}

/** A required one-line name: trimmed, not empty, at most `max` characters. */
export const nameText = (max: number) =>
  z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(max, `must be at most ${max} characters`)
    .refine(...singleLine);

/** A free-text description: at most 2,000 characters, lines allowed. */
export const descriptionText = () =>
  z
    .string()
    .max(2000, "must be at most 2000 characters")
    .refine(...multiLine);
