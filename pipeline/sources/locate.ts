// Where a source table lives: `<dir>/<table>.csv|.parquet`, or a folder `<dir>/<table>/` of them.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

export interface LocatedTable {
  format: "csv" | "parquet";
  files: string[];
}

const EXT = /\.(csv|parquet)$/i;

export function locateTable(dir: string, table: string): LocatedTable | null {
  for (const ext of ["csv", "parquet"] as const) {
    const f = join(dir, `${table}.${ext}`);
    if (existsSync(f) && statSync(f).isFile()) return { format: ext, files: [f] };
  }
  const folder = join(dir, table);
  if (existsSync(folder) && statSync(folder).isDirectory()) {
    const files = readdirSync(folder)
      .filter((n) => EXT.test(n))
      .sort()
      .map((n) => join(folder, n));
    if (files.length === 0) return null;
    const formats = new Set(files.map((f) => (f.toLowerCase().endsWith(".csv") ? "csv" : "parquet")));
    if (formats.size > 1) throw new Error(`${folder}: mixes CSV and Parquet files; use one format per table`);
    return { format: [...formats][0] as "csv" | "parquet", files };
  }
  return null;
}
