// The few SQL operations the catalog's writes need, the same for DuckDB and PostgreSQL: both take
// positional parameters ($1 …), so one body of write code runs on either (pipeline/store/catalog/writes.ts).

export type SqlValue = string | number | boolean | null;

/** One open transaction. */
export interface SqlTx {
  run(sql: string, params?: SqlValue[]): Promise<void>;
  rows<T = Record<string, unknown>>(sql: string, params?: SqlValue[]): Promise<T[]>;
  /**
   * Holds `name` until the transaction ends, against other processes' transactions asking for it
   * (PostgreSQL: an advisory transaction lock; the DuckDB file admits one transaction at a time anyway).
   */
  exclusive(name: string): Promise<void>;
}

/** Positional binds: `b.v(x)` binds x and gives `$n` to write into the SQL; run with `b.params`. */
export class PosBinds {
  readonly params: SqlValue[] = [];
  v(value: SqlValue): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }
  /** Each value bound on its own, as the items of an `in (…)` list (`null` for none, which matches nothing). */
  each(values: readonly SqlValue[]): string {
    return values.map((x) => this.v(x)).join(", ") || "null";
  }
}
