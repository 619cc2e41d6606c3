// Fresh PostgreSQL databases for tests, on the server this machine and CI run (127.0.0.1:5432,
// user postgres, trust): each `freshDatabase()` creates catalog_test_<random>, and `dropDatabases()`
// (afterAll) drops every one this run made.
import { randomBytes } from "node:crypto";
import pg from "pg";

const SERVER = "postgres://postgres@127.0.0.1:5432";
const made: string[] = [];

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: `${SERVER}/postgres` });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** A new empty database; its URL. */
export async function freshDatabase(): Promise<string> {
  const name = `catalog_test_${randomBytes(6).toString("hex")}`;
  await admin((c) => c.query(`create database ${name}`));
  made.push(name);
  return `${SERVER}/${name}`;
}

export async function dropDatabases(): Promise<void> {
  const names = made.splice(0);
  await admin(async (c) => {
    for (const n of names) await c.query(`drop database if exists ${n} with (force)`);
  });
}
