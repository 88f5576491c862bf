// Testcontainers for Node.js against nsrun api, for 33-testcontainers.t, with its
// defaults (Ryuk enabled).  DOCKER_HOST names the socket; the images are nsrun's
// store's `services` (redis-server, PostgreSQL 15; make service-image).
//   node tc.js         a GenericContainer Redis (log wait strategy) and PostgreSQL
//                      through its module, a real query in each, prints KEY=VALUE;
//                      PostgreSQL is stopped, then it prints started=ID (Redis's)
//                      and waits with Redis running (to be killed: Ryuk's job)
const { GenericContainer, Wait } = require("testcontainers");
const { PostgreSqlContainer } = require("@testcontainers/postgresql");

const PG = "/usr/lib/postgresql/15/bin";

function redis() {
  return new GenericContainer("services")
    .withCommand(["redis-server", "--save", "", "--appendonly", "no", "--dir", "/tmp"])
    .withExposedPorts(6379)
    .withWaitStrategy(Wait.forLogMessage("Ready to accept connections"));
}

async function suite() {
  const r = await redis().start();
  await r.exec(["redis-cli", "set", "k", "from-node"]);
  const got = await r.exec(["redis-cli", "-p", "6379", "get", "k"]);
  console.log(`redis=${got.exitCode} ${got.output.trim()} port=${r.getMappedPort(6379) > 0}`);
  // the module's image is the official one, whose entrypoint makes the cluster:
  // this one is made by the command, as a user that is not root (initdb refuses
  // root, which a container without User is, as Docker's is)
  const pg = await new PostgreSqlContainer("services")
    .withUser("65534:65534")
    .withCommand(["sh", "-c", `${PG}/initdb --no-sync -D /tmp/pg -U test -A trust >/dev/null && ` +
      `exec ${PG}/postgres -D /tmp/pg -k /tmp -c listen_addresses=127.0.0.1 -c fsync=off`])
    .withWaitStrategy(Wait.forLogMessage(/ready to accept connections/))
    .start();
  const q = await pg.exec(["psql", "-h", "127.0.0.1", "-U", pg.getUsername(), "-d", "postgres", "-tAc",
    "select sum(n) * 3 from (values (6), (8)) as t(n)"]);
  console.log(`postgres=${q.exitCode} ${q.output.trim()} port=${pg.getPort() > 0}`);
  await pg.stop();
  console.log(`stopped=${pg.getId()}`);
  console.log(`started=${r.getId()}`);
  setInterval(() => {}, 1 << 30); // until killed (a pending promise alone lets node exit)
}

suite().catch((e) => {
  console.error("FAIL", e);
  process.exit(1);
});
