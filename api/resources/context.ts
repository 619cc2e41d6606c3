// What every resource reader is given: the snapshot read once for the request, the catalog, and
// the authenticated caller.
import type { CatalogReader } from "../../pipeline/store/catalog/types.ts";
import type { Caller } from "../auth.ts";
import type { SnapshotRef } from "./snapshot-access.ts";

export interface ReadContext {
  snapshot: SnapshotRef;
  catalog: CatalogReader;
  caller: Caller;
}
