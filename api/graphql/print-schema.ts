// `npm run graphql-schema`: writes the printed SDL to schema.graphql (committed; a test fails
// when the file and the code drift apart).
import { writeFileSync } from "node:fs";
import { printedSchema } from "./schema.ts";

const out = new URL("../../schema.graphql", import.meta.url);
writeFileSync(out, printedSchema());
console.log(`wrote ${out.pathname}`);
