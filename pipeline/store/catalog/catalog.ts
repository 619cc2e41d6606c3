// The catalog: users, hashed API keys, watchlists, user portfolios, rebalance failures and the
// stable id map. `Catalog` is the port (pipeline/store/catalog/types.ts CatalogPort); where it
// lives is a location: a DuckDB file's path (embedded, one host) or a postgres:// URL (any number
// of hosts).

import { EmbeddedCatalog } from "./embedded.ts";
import { PgCatalog } from "./postgres.ts";
import type { CatalogPort } from "./types.ts";

export { EmbeddedCatalog } from "./embedded.ts";
export { CatalogError, CatalogUnavailable } from "./errors.ts";
export { PgCatalog } from "./postgres.ts";

export type Catalog = CatalogPort;

export const isPostgresUrl = (location: string) => /^postgres(ql)?:\/\//.test(location);

export const Catalog = {
  /** The embedded catalog in the DuckDB file at `path` (created when missing). */
  open: (path: string): Promise<EmbeddedCatalog> => EmbeddedCatalog.open(path),
  /** The catalog at `location`: a postgres:// URL, else the path of a DuckDB file. */
  at: (location: string): Promise<Catalog> =>
    isPostgresUrl(location) ? PgCatalog.open(location) : EmbeddedCatalog.open(location),
};
