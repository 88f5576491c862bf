// Testcontainers for Node.js against nsrun api, for 33-testcontainers.t, with its
// defaults (Ryuk enabled, images pulled when missing).  DOCKER_HOST names the socket;
// the images are the tests' redis:7 and postgres:16 (make oci-test-images), which the
// test pushes to a loopback registry that a registries.conf mirror puts in
// docker.io's place.
//   node tc.js         a GenericContainer Redis (log wait strategy) and PostgreSQL
//                      through its module (its own wait: health check and ports), a
//                      real query in each, the user each server runs as, a file
//                      Redis got by withCopyContentToContainer before its start, prints
//                      KEY=VALUE; PostgreSQL is stopped, then it prints started=ID
//                      (Redis's) and waits with Redis running (to be killed: Ryuk's job)
const { GenericContainer, Wait } = require("testcontainers");
const { PostgreSqlContainer } = require("@testcontainers/postgresql");

// the user (name and uid inside) of the process named NAME, from inside the container
async function serverUser(c, name) {
  const r = await c.exec(["sh", "-c", `for s in /proc/[0-9]*/status; do ` +
    `awk '$1 == "Name:" { n = $2 } $1 == "Uid:" { u = $2 } END { if (n == "${name}") print u }' "$s" 2>/dev/null; done | sort -u`]);
  const uid = r.output.trim();
  const who = await c.exec(["awk", "-F:", "-v", `u=${uid}`, "$3 == u { print $1 }", "/etc/passwd"]);
  return `${who.output.trim()}:${uid}`;
}

async function suite() {
  // both pulled and started at once (CI's time: each pull is seconds)
  const [r, pg] = await Promise.all([
    new GenericContainer("redis:7")
      .withExposedPorts(6379)
      .withWaitStrategy(Wait.forLogMessage("Ready to accept connections"))
      // put into the created container (PUT archive before start), there at start
      .withCopyContentToContainer([{ content: "copied-by-node\n", target: "/tmp/copied.txt", mode: 0o640 }])
      .start(),
    new PostgreSqlContainer("postgres:16").start(),
  ]);
  await r.exec(["redis-cli", "set", "k", "from-node"]);
  const got = await r.exec(["redis-cli", "-p", "6379", "get", "k"]);
  console.log(`redis=${got.exitCode} ${got.output.trim()} port=${r.getMappedPort(6379) > 0}`);
  console.log(`redis_user=${await serverUser(r, "redis-server")}`);
  const copied = await r.exec(["ls", "-l", "/tmp/copied.txt"]);
  const content = await r.exec(["cat", "/tmp/copied.txt"]);
  console.log(`copied=${copied.output.trim().split(/\s+/)[0]} ${content.output.trim()}`);
  const q = await pg.exec(["psql", "-h", "127.0.0.1", "-U", pg.getUsername(), "-d", pg.getDatabase(), "-tAc",
    "select sum(n) * 3 from (values (6), (8)) as t(n)"]);
  console.log(`postgres=${q.exitCode} ${q.output.trim()} port=${pg.getPort() > 0}`);
  console.log(`postgres_user=${await serverUser(pg, "postgres")}`);
  await pg.stop();
  console.log(`stopped=${pg.getId()}`);
  console.log(`started=${r.getId()}`);
  setInterval(() => {}, 1 << 30); // until killed (a pending promise alone lets node exit)
}

suite().catch((e) => {
  console.error("FAIL", e);
  process.exit(1);
});
