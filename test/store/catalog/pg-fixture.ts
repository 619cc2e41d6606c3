// Fresh PostgreSQL databases for tests, on the server this machine and CI run (127.0.0.1:5432,
// user postgres, trust): each `freshDatabase()` creates catalog_test_<random>, and `dropDatabases()`
// (afterAll) drops every one this run made.
import { randomBytes } from "node:crypto";
import { connect, createServer, type Server, type Socket } from "node:net";
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

/** A TCP relay in front of the server, to cut the catalog off and bring it back. */
export async function relay(port: number) {
  const sockets = new Set<Socket>();
  let server: Server;
  const start = () =>
    new Promise<void>((ok) => {
      server = createServer((s) => {
        const up = connect(5432, "127.0.0.1");
        for (const x of [s, up]) {
          sockets.add(x);
          x.on("error", () => undefined);
          x.on("close", () => sockets.delete(x));
        }
        s.pipe(up).pipe(s);
      }).listen(port, "127.0.0.1", ok);
    });
  await start();
  return {
    url: (db: string) => db.replace(":5432/", `:${port}/`),
    cut: async () => {
      await new Promise<void>((done) => {
        server.close(() => done());
        for (const s of sockets) s.destroy();
      });
    },
    restore: start,
  };
}
