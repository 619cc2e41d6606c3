// The layers, checked on the import graph of the sources (every import and export-from line,
// type-only ones and dynamic import() included): pipeline/ is computation and the store, api/ is
// HTTP, jobs/ wires the two; a lower layer never imports a higher one, and no module imports
// itself back through others. Also: only jobs/config.ts reads the environment.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const LAYERS = ["api", "pipeline", "jobs"];

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(dir, f).split("\\").join("/"));
}

// Comments out (a `//` after a colon is a URL in a string, not a comment), then the specifiers of
// `import … from`, `export … from`, `import "…"` and `import("…")`.
const withoutComments = (src: string) => src.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'\w])\/\/.*$/gm, "$1");
const SPECIFIERS = [
  /\b(?:import|export)\s+(?:type\s+)?[\w*{}\s,$]*?\s*from\s*["']([^"']+)["']/g,
  /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
  /^\s*import\s+["']([^"']+)["']/gm,
];

/** file → the repository files it imports (relative imports only; packages are not layers). */
function importGraph(files: string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const src = withoutComments(readFileSync(join(ROOT, f), "utf8"));
    const deps = new Set<string>();
    for (const re of SPECIFIERS)
      for (const m of src.matchAll(re)) {
        if (!m[1].startsWith(".")) continue;
        const target = relative(ROOT, resolve(ROOT, dirname(f), m[1]))
          .split("\\")
          .join("/");
        if (known.has(target)) deps.add(target);
      }
    graph.set(f, [...deps]);
  }
  return graph;
}

/** Strongly connected components of more than one file (Tarjan): each is an import cycle. */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || graph.get(v)?.includes(v)) found.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

const files = LAYERS.flatMap(sources);
const graph = importGraph(files);

/** "from → to" for every import of a file under `from` of a file under one of `to`. */
const imports = (from: string, to: string[]) =>
  [...graph].flatMap(([f, deps]) =>
    f.startsWith(from) ? deps.filter((d) => to.some((t) => d.startsWith(t))).map((d) => `${f} → ${d}`) : [],
  );

describe("the layers", () => {
  it("reads the import graph (a sanity check of the reader itself)", () => {
    expect(files.length).toBeGreaterThan(150);
    // known edges, one of each statement shape: a multi-line import, a re-export, a dynamic import()
    expect(graph.get("pipeline/store/read/load-snapshot.ts")).toContain("pipeline/store/snapshot/model.ts");
    expect(graph.get("jobs/queue/dispatch.ts")).toContain("jobs/queue/await-job.ts");
    expect(graph.get("jobs/queue/dispatch.ts")).toContain("jobs/queue/dispatch-queue.ts");
  });

  it("pipeline/ imports nothing from api/ or jobs/", () => {
    expect(imports("pipeline/", ["api/", "jobs/"])).toEqual([]);
  });

  it("pipeline/store/ imports nothing from pipeline/stages/ (the server never loads stage code)", () => {
    expect(imports("pipeline/store/", ["pipeline/stages/"])).toEqual([]);
  });

  it("api/ imports nothing from pipeline/stages/", () => {
    expect(imports("api/", ["pipeline/stages/"])).toEqual([]);
  });

  it("pipeline/financials/ imports nothing from pipeline/sources/ (sources reads financials, not back)", () => {
    expect(imports("pipeline/financials/", ["pipeline/sources/"])).toEqual([]);
  });

  it("jobs/ rooms import one way: cli → host → worker → queue → local; webhooks/ only local/, queue/", () => {
    const ROOMS = ["cli", "host", "worker", "queue", "local"];
    const room = (f: string) => f.split("/")[1];
    const upward = [...graph].flatMap(([f, deps]) =>
      f.startsWith("jobs/")
        ? deps
            .filter((d) => d.startsWith("jobs/") && room(d) !== room(f))
            .filter((d) =>
              room(f) === "webhooks"
                ? ROOMS.includes(room(d)) && !["local", "queue"].includes(room(d))
                : ROOMS.includes(room(f)) &&
                  ROOMS.indexOf(room(d)) >= 0 &&
                  ROOMS.indexOf(room(d)) < ROOMS.indexOf(room(f)),
            )
            .map((d) => `${f} → ${d}`)
        : [],
    );
    expect(upward).toEqual([]);
  });

  it("pipeline/financials/ imports nothing from pipeline/store/ (the store reads their rows)", () => {
    expect(imports("pipeline/financials/", ["pipeline/store/"])).toEqual([]);
  });

  it("has no import cycle in api/, pipeline/ or jobs/", () => {
    expect(cycles(graph)).toEqual([]);
  });

  it("finds a cycle where there is one (the check can fail)", () => {
    const g = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", ["a.ts"]],
    ]);
    expect(cycles(g)).toEqual([["a.ts", "b.ts", "c.ts"]]);
  });
});

describe("the environment", () => {
  it("is read by jobs/config.ts alone (tests and benchmarks keep their own)", () => {
    const readers = [...LAYERS, "data", "scripts"]
      .flatMap((d) => readdirSync(join(ROOT, d), { recursive: true, encoding: "utf8" }).map((f) => join(d, f)))
      .filter((f) => /\.(ts|mjs|cjs|js)$/.test(f) && f !== join("jobs", "config.ts"))
      .flatMap((f) =>
        withoutComments(readFileSync(join(ROOT, f), "utf8"))
          .split("\n")
          // npm start's primary sets a variable for the server processes it forks: a write, not a read
          .filter((l) => /process\.env\b/.test(l) && !/process\.env(\.\w+|\[\w+\])\s*=[^=]/.test(l))
          .map((l) => `${f}: ${l.trim()}`),
      );
    expect(readers).toEqual([]);
  });
});

/** `file:line: length` of each line longer than `max` in `text`. */
function longLines(file: string, text: string, max = 120): string[] {
  return text.split(/\r?\n/).flatMap((l, i) => (l.length > max ? [`${file}:${i + 1}: ${l.length}`] : []));
}

describe("the source text", () => {
  // Biome wraps code at 120 but leaves long strings, template literals and comments alone: this names them.
  const DIRS = ["api", "pipeline", "jobs", "data", "scripts", "bench", "test"];
  it(`has no line over 120 characters in ${DIRS.join("/, ")}/ (.ts, .mjs, .cjs, .js)`, () => {
    const found = DIRS.flatMap((d) =>
      readdirSync(join(ROOT, d), { recursive: true, encoding: "utf8" })
        .filter((f) => /\.(ts|mjs|cjs|js)$/.test(f))
        .flatMap((f) => longLines(join(d, f).split("\\").join("/"), readFileSync(join(ROOT, d, f), "utf8"))),
    );
    expect(found).toEqual([]);
  });

  it("names the file, line and length of a long line (the check can fail)", () => {
    const text = ["short", "x".repeat(120), "y".repeat(121), "", "z".repeat(130), "w".repeat(120)].join("\r\n");
    expect(longLines("a.ts", text)).toEqual(["a.ts:3: 121", "a.ts:5: 130"]);
  });
});
