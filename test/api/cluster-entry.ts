// Entry script for the cluster test: the primary and every worker run this same file, as the
// start script does. The primary reports its URL over IPC and closes on "close".
import cluster from "node:cluster";
import pino from "pino";
import { startServer } from "../../api/server.ts";
import { buildCatalog, buildFixture } from "./fixture.ts";

const srv = await startServer({
  port: 0,
  host: "127.0.0.1",
  workers: 2,
  makeDeps: async () => {
    const fx = buildFixture({ stocks: 20, days: 80, id: `snap-${process.pid}` });
    return { snapshot: () => fx.snapshot, catalog: buildCatalog(fx), logger: pino({ level: "silent" }) };
  },
});
if (cluster.isPrimary) {
  process.send?.({ url: srv.url });
  process.on("message", async (m) => {
    if (m === "close") {
      await srv.close();
      process.exit(0);
    }
  });
}
