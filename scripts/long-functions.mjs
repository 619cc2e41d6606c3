// Lists every function, method, accessor, constructor and arrow function longer than 60 lines
// (from its first token to its closing one), read with the TypeScript compiler's parser. A function
// may stay longer when the line right before it says why: `// long-function: <reason>`.
//   node scripts/long-functions.mjs                  api/ jobs/ pipeline/ data/ scripts/
//   node scripts/long-functions.mjs pipeline jobs    those folders (or files) only
//   options: --root DIR (the folders are under it; default the repository), --max N (default 60),
//            --json (one JSON array of { file, line, name, lines } instead of text)
// Exit code 1 when one is found. Plain JS, so it runs without a build.
import { readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { SyntaxKind } from "typescript/unstable/ast";
import { API } from "typescript/unstable/sync";

const DEFAULT_DIRS = ["api", "jobs", "pipeline", "data", "scripts"];
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;
const ALLOW = /^\s*\/\/\s*long-function:\s*\S/;
const FUNCTIONS = new Set([
  SyntaxKind.FunctionDeclaration,
  SyntaxKind.FunctionExpression,
  SyntaxKind.ArrowFunction,
  SyntaxKind.MethodDeclaration,
  SyntaxKind.Constructor,
  SyntaxKind.GetAccessor,
  SyntaxKind.SetAccessor,
]);

/** Nodes that name the function they hold (`const f = () => …`, `{ f: () => … }`, `f = () => …` in a class). */
const FUNCTION_HOLDERS = new Set([
  SyntaxKind.VariableDeclaration,
  SyntaxKind.PropertyAssignment,
  SyntaxKind.PropertyDeclaration,
]);

/** The source files under `paths` (folders or files, relative to `root`), skipping node_modules and dotted names. */
function sourceFiles(root, paths) {
  const out = [];
  const walk = (p) => {
    if (statSync(p).isFile()) {
      if (SOURCE.test(p) && !p.endsWith(".d.ts")) out.push(p);
      return;
    }
    for (const e of readdirSync(p).sort())
      if (e !== "node_modules" && e !== "dist" && !e.startsWith(".")) walk(join(p, e));
  };
  for (const p of paths) walk(resolve(root, p));
  return out;
}

/**
 * Parses `files` only: a project of its own that resolves no import and loads no library, so it
 * takes well under a second.
 */
function parse(root, files) {
  const config = join(root, "long-functions.virtual-tsconfig.json");
  const compilerOptions = { noResolve: true, noLib: true, types: [], allowJs: true, noEmit: true };
  const api = new API({
    cwd: root,
    fs: {
      readFile: (f) => (f === config ? JSON.stringify({ files, compilerOptions }) : undefined),
      fileExists: (f) => (f === config ? true : undefined),
    },
  });
  try {
    const project = api.updateSnapshot({ openProject: config }).getProjects()[0];
    return files.map((f) => project.program.getSourceFile(f));
  } finally {
    api.close();
  }
}

/** What a function is called where it is written: its name, or the variable or property it is assigned to. */
function nameOf(node, text) {
  const named = node.name ?? (node.parent && FUNCTION_HOLDERS.has(node.parent.kind) ? node.parent.name : undefined);
  if (named) return text.slice(named.getStart(), named.end);
  if (node.kind === SyntaxKind.Constructor) return "constructor";
  return node.kind === SyntaxKind.ArrowFunction ? "(arrow)" : "(function)";
}

/** The 0-based lines a function's allow comment may sit right above: its own first line, and its statement's. */
function headLines(node, sf) {
  const lines = [sf.getLineAndCharacterOfPosition(node.getStart()).line];
  let holder = node.parent;
  while (holder && FUNCTION_HOLDERS.has(holder.kind)) holder = holder.parent;
  if (holder?.kind === SyntaxKind.VariableDeclarationList) holder = holder.parent;
  if (holder && holder.kind !== SyntaxKind.SourceFile)
    lines.push(sf.getLineAndCharacterOfPosition(holder.getStart()).line);
  return lines;
}

/** The functions of one parsed file longer than `max` lines with no allow comment above them. */
function longIn(sf, file, max) {
  const found = [];
  const text = sf.text;
  const lineText = (i) => text.slice(sf.getLineStarts()[i], sf.getLineStarts()[i + 1] ?? text.length);
  const visit = (node) => {
    if (FUNCTIONS.has(node.kind) && node.body) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart()).line;
      const lines = sf.getLineAndCharacterOfPosition(node.end).line - first + 1;
      const allowed = headLines(node, sf).some((l) => l > 0 && ALLOW.test(lineText(l - 1)));
      if (lines > max && !allowed) found.push({ file, line: first + 1, name: nameOf(node, text), lines });
    }
    node.forEachChild(visit);
  };
  visit(sf);
  return found;
}

/** `{ file, line, name, lines }` of every function over `max` lines under `paths`, by file then line. */
export function longFunctions({ root = resolve(import.meta.dirname, ".."), paths = DEFAULT_DIRS, max = 60 } = {}) {
  const files = sourceFiles(root, paths);
  const parsed = parse(root, files);
  return parsed.flatMap((sf, i) => longIn(sf, relative(root, files[i]).split("\\").join("/"), max));
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { root: { type: "string" }, max: { type: "string" }, json: { type: "boolean" } },
  });
  const found = longFunctions({
    root: values.root ? resolve(values.root) : undefined,
    paths: positionals.length ? positionals : undefined,
    max: values.max ? Number(values.max) : undefined,
  });
  if (values.json) console.log(JSON.stringify(found));
  else {
    for (const f of found) console.log(`${f.file}:${f.line}: ${f.name} (${f.lines} lines)`);
    console.log(`${found.length} function${found.length === 1 ? "" : "s"} over ${values.max ?? 60} lines`);
  }
  process.exitCode = found.length ? 1 : 0;
}
