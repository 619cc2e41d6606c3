// API keys: `npm run keys -- create --email E --scopes a,b [--json]`, `list`, `revoke ID`; and
// `migrate-catalog --to postgres://…`, which copies the embedded catalog to PostgreSQL.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Catalog, CatalogError, isPostgresUrl } from "../../pipeline/store/catalog/catalog.ts";
import { copyCatalog } from "../../pipeline/store/catalog/copy.ts";
import { SCOPES } from "../../pipeline/store/catalog/types.ts";
import { loadConfig } from "../config.ts";
import { runCommand, UsageError } from "../host/run-command.ts";
import { ensureWritableDir } from "../host/store-check.ts";

const USAGE = `usage: npm run keys -- <command>
  create --email E --scopes S,S [--first-name F --last-name L --phone P] [--json]
         creates the user when new; prints the key once (with --json the last line is {"id","key","scopes"})
  list   keys with their user, scopes and state (never the keys themselves)
  revoke ID
  migrate-catalog --to postgres://USER@HOST/DB
         copies DATA_DIR/catalog.duckdb (users, hashed keys, watchlists, portfolios) to PostgreSQL with the
         same ids; rows already there are kept, so it may run again; prints what it copied
scopes: ${SCOPES.join(", ")}`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const config = loadConfig();
  ensureWritableDir(config.dataDir);
  if (command === "migrate-catalog") return migrateCatalog(rest, join(config.dataDir, "catalog.duckdb"));
  const catalog = await Catalog.at(config.catalogLocation);
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

async function migrateCatalog(args: string[], path: string): Promise<number> {
  const { values } = parseArgs({ args, options: { to: { type: "string" } } });
  if (!values.to || !isPostgresUrl(values.to)) throw new UsageError("migrate-catalog needs --to postgres://…");
  if (!existsSync(path)) throw new UsageError(`no embedded catalog at ${path} (is DATA_DIR right?)`);
  const from = await Catalog.open(path);
  const report = await copyCatalog(from, values.to);
  const where = new URL(values.to);
  console.log(`copied ${path} to postgres ${where.host}${where.pathname}:`);
  for (const [table, { read, copied }] of Object.entries(report))
    console.log(`  ${table}: ${copied} copied, ${read - copied} already there`);
  return 0;
}

runCommand(main, { usage: USAGE, codeFor: (e) => (e instanceof CatalogError ? 2 : 1) });
