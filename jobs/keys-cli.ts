// API keys: `npm run keys -- create --email E --scopes a,b [--json]`, `list`, `revoke ID`.
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Catalog, CatalogError } from "../pipeline/store/catalog/catalog.ts";
import { SCOPES } from "../pipeline/store/catalog-types.ts";
import { loadConfig } from "./config.ts";
import { runCommand, UsageError } from "./run-command.ts";
import { ensureWritableDir } from "./store-check.ts";

const USAGE = `usage: npm run keys -- <command>
  create --email E --scopes S,S [--first-name F --last-name L --phone P] [--json]
         creates the user when new; prints the key once (with --json the last line is {"id","key","scopes"})
  list   keys with their user, scopes and state (never the keys themselves)
  revoke ID
scopes: ${SCOPES.join(", ")}`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const config = loadConfig();
  ensureWritableDir(config.dataDir);
  const catalog = await Catalog.open(join(config.dataDir, "catalog.duckdb"));
  if (command === "create") {
    const { values } = parseArgs({
      args: rest,
      options: {
        email: { type: "string" },
        scopes: { type: "string" },
        json: { type: "boolean" },
        "first-name": { type: "string" },
        "last-name": { type: "string" },
        phone: { type: "string" },
      },
    });
    if (!values.email || !values.scopes) throw new UsageError("create needs --email and --scopes");
    const user =
      catalog.userByEmail(values.email) ??
      (await catalog.createUser({
        email: values.email,
        firstName: values["first-name"] ?? "",
        lastName: values["last-name"] ?? "",
        phoneNumber: values.phone ?? "",
      }));
    const created = await catalog.createKey(
      user.id,
      values.scopes
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    );
    if (values.json) console.log(JSON.stringify(created));
    else
      console.log(
        `key ${created.id} for ${user.email} (${created.scopes.join(", ")}):\n${created.key}\nIt is shown ` +
          `once; only its hash is stored.`,
      );
    return 0;
  }
  if (command === "list") {
    for (const k of catalog.listKeys())
      console.log(
        `${k.id}\t${catalog.getUser(k.userId)?.email ?? k.userId}\t${k.scopes.join(",")}\t` +
          `${k.revokedAt ? `revoked ${k.revokedAt}` : "active"}\tcreated ${k.createdAt}`,
      );
    return 0;
  }
  if (command === "revoke" && rest[0]) {
    await catalog.revokeKey(rest[0]);
    console.log(`revoked ${rest[0]}`);
    return 0;
  }
  if (command && command !== "help" && command !== "--help" && command !== "-h")
    throw new UsageError(command === "revoke" ? "revoke needs a key ID" : `unknown command ${JSON.stringify(command)}`);
  console.log(USAGE);
  return 0;
}

runCommand(main, { usage: USAGE, codeFor: (e) => (e instanceof CatalogError ? 2 : 1) });
