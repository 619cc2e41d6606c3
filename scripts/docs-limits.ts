// Rewrites the generated block of docs/api/limits.md from the constants the server enforces
// (api/graphql/limits-doc.ts); test/api/docs-limits.test.ts fails while the file differs.
import { readFileSync, writeFileSync } from "node:fs";
import { graphqlLimitsMarkdown, withLimitsBlock } from "../api/graphql/limits-doc.ts";

const file = new URL("../docs/api/limits.md", import.meta.url);
const next = withLimitsBlock(readFileSync(file, "utf8"), graphqlLimitsMarkdown());
if (next === null) throw new Error("docs/api/limits.md has no generated block (its markers)");
writeFileSync(file, next);
