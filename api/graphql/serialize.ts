// An execution result as JSON, in slices: JSON.stringify of a 4.5 MB answer (three daily series)
// held the event loop for tens of milliseconds on top of computing them. The `data` tree is
// walked down to SLICE_DEPTH levels, each subtree below that stringified whole, and the walk
// yields to the loop (setImmediate) once a slice has run for SLICE_MS. The text is what
// JSON.stringify gives for execution data (plain objects, arrays, strings, numbers, booleans, null).
import type { ExecutionResult } from "graphql";

const SLICE_DEPTH = 5;
const SLICE_MS = 8;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function stringifySliced(result: ExecutionResult): Promise<string> {
  let since = performance.now();
  const walk = async (v: unknown, depth: number): Promise<string> => {
    if (depth >= SLICE_DEPTH || v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
    const parts: string[] = [];
    const step = async (x: unknown) => {
      const s = await walk(x, depth + 1);
      if (performance.now() - since > SLICE_MS) {
        await turn();
        since = performance.now();
      }
      return s;
    };
    if (Array.isArray(v)) {
      for (const x of v) parts.push(await step(x));
      return `[${parts.join(",")}]`;
    }
    for (const [k, x] of Object.entries(v)) if (x !== undefined) parts.push(`${JSON.stringify(k)}:${await step(x)}`);
    return `{${parts.join(",")}}`;
  };
  const { data, ...rest } = result;
  const tail = JSON.stringify(rest);
  if (data === undefined) return tail;
  const head = `{"data":${await walk(data, 0)}`;
  return tail === "{}" ? `${head}}` : `${head},${tail.slice(1)}`;
}
