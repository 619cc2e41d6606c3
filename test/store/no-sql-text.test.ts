// No SQL assembled from data (issue 27): every value reaching DuckDB is a bound parameter. This
// reads the source tree (pipeline/, api/, jobs/) and fails naming file:line for
//   - any call of lit() (the old helper that pasted values into SQL as quoted text), and
//   - a template literal that looks like SQL and interpolates inside a single-quoted SQL string
//     ('${x}', 'abc${x}'), where a value would become SQL text.
// Identifiers (ident(), variableRef()) are names from our own fixed specs and are not flagged.
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the scanner's own cases are source text with ${} in it
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const DIRS = ["pipeline", "api", "jobs"];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (name !== "node_modules" && !name.startsWith(".")) out.push(...sourceFiles(p));
    } else if (name.endsWith(".ts")) out.push(p);
  }
  return out;
}

/** A template literal: its text with each interpolation as \u0001, and the line it starts on. */
interface Template {
  text: string;
  line: number;
}

/**
 * The template literals of TypeScript source (nested ones too), skipping comments and quoted
 * strings. A small scanner, not a parser: enough for our sources (no backticks in regex literals).
 */
function templatesOf(src: string): Template[] {
  const out: Template[] = [];
  let line = 1;
  // one frame per open template: its text so far; `depth` counts braces of the interpolation in progress
  const stack: { text: string; line: number; depth: number; inCode: boolean }[] = [];
  let i = 0;
  const top = () => stack[stack.length - 1];
  while (i < src.length) {
    const c = src[i];
    if (c === "\n") line++;
    const t = top();
    if (t && !t.inCode) {
      // inside a template's text
      if (c === "\\") {
        t.text += src.slice(i, i + 2);
        if (src[i + 1] === "\n") line++;
        i += 2;
        continue;
      }
      if (c === "`") {
        stack.pop();
        out.push({ text: t.text, line: t.line });
        i++;
        continue;
      }
      if (c === "$" && src[i + 1] === "{") {
        t.text += "\u0001";
        t.inCode = true;
        t.depth = 0;
        i += 2;
        continue;
      }
      t.text += c;
      i++;
      continue;
    }
    // code (top level, or inside an interpolation)
    if (c === "/" && src[i + 1] === "/") {
      while (i < src.length && src[i] !== "\n") i++;
      continue;
    }
    if (c === "/" && src[i + 1] === "*") {
      const end = src.indexOf("*/", i + 2);
      const stop = end < 0 ? src.length : end + 2;
      for (let k = i; k < stop; k++) if (src[k] === "\n") line++;
      i = stop;
      continue;
    }
    if (c === "'" || c === '"') {
      i++;
      while (i < src.length && src[i] !== c && src[i] !== "\n") i += src[i] === "\\" ? 2 : 1;
      i++;
      continue;
    }
    if (c === "`") {
      stack.push({ text: "", line, depth: 0, inCode: false });
      i++;
      continue;
    }
    if (t?.inCode) {
      if (c === "{") t.depth++;
      else if (c === "}") {
        if (t.depth === 0) t.inCode = false;
        else t.depth--;
      }
    }
    i++;
  }
  return out;
}

const SQL = new RegExp(
  String.raw`\b(select\b[\s\S]*\bfrom|insert\s+into|update\s+\w+\s+set|delete\s+from|` +
    String.raw`create\s+(or\s+replace\s+)?(temp\s+)?(table|view|macro)|copy\s*\(|read_parquet|read_csv|` +
    String.raw`parquet_metadata|set\s+variable)\b`,
  "i",
);

/** Whether an interpolation (\u0001) of `text` sits inside a single-quoted SQL string. */
function interpolatesInQuotes(text: string): boolean {
  let quoted = false;
  for (const ch of text) {
    if (ch === "'")
      quoted = !quoted; // '' (an escaped quote) toggles twice
    else if (ch === "\u0001" && quoted) return true;
  }
  return false;
}

/** Each `file:line: why` of SQL built with data in it, in the files given. */
function sqlTextFindings(files: string[]): string[] {
  const out: string[] = [];
  for (const f of files) {
    const src = readFileSync(f, "utf8");
    const name = relative(ROOT, f);
    src.split("\n").forEach((l, k) => {
      if (/(^|[^\w$.])lit\(/.test(l)) out.push(`${name}:${k + 1}: lit() pastes a value into SQL`);
    });
    for (const t of templatesOf(src))
      if (SQL.test(t.text) && interpolatesInQuotes(t.text))
        out.push(`${name}:${t.line}: a value interpolated into a quoted SQL string`);
  }
  return out;
}

describe("no SQL assembled from text", () => {
  it("the scanner finds what it must (and leaves prose and bound SQL alone)", () => {
    const flagged = (src: string) => templatesOf(src).some((t) => SQL.test(t.text) && interpolatesInQuotes(t.text));
    expect(flagged("conn.run(`select * from t where id = '${id}'`)")).toBe(true);
    expect(flagged("conn.run(`select * from read_parquet('${dir}/x.parquet')`)")).toBe(true);
    expect(flagged("const q = `delete from t\n where name = 'a${n}'`;")).toBe(true);
    // nested: the inner template is SQL with a quoted interpolation
    expect(flagged("x(`${a ? `select 1 from t where d = '${d}'` : ''}`)")).toBe(true);
    expect(flagged("conn.run(`select * from t where id = $1`, [id])")).toBe(false);
    expect(flagged("conn.run(`select * from t where id = ${b.v(id)} and k = 'rebalance'`)")).toBe(false);
    expect(flagged("throw new Error(`unknown rating '${k}'`)")).toBe(false);
    expect(flagged("const s = `it's ${x}`; // select from")).toBe(false);
  });

  it(`nothing in ${DIRS.join(", ")} pastes a value into SQL`, () => {
    const files = DIRS.flatMap((d) => sourceFiles(join(ROOT, d)));
    expect(files.length).toBeGreaterThan(100);
    expect(sqlTextFindings(files)).toEqual([]);
  });
});
