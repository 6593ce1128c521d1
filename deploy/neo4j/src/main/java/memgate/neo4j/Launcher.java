package memgate.neo4j;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.SettingValueParsers;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Transaction;
import org.neo4j.logging.Level;
import org.neo4j.logging.log4j.Log4jLogProvider;

/**
 * Runs an embedded Neo4j Community DBMS with only the Bolt connector enabled.
 *
 * <p>Options (argument, else environment variable, else default):
 * <ul>
 *   <li>{@code --port N}        / MEMGATE_NEO4J_PORT       (7687)</li>
 *   <li>{@code --host ADDR}     / MEMGATE_NEO4J_HOST       (127.0.0.1)</li>
 *   <li>{@code --data-dir DIR}  / MEMGATE_NEO4J_DATA_DIR   (./neo4j-data); used as the
 *       Neo4j home: the store goes to DIR/data, Neo4j's own logs to DIR/logs</li>
 *   <li>{@code --pagecache SZ}  / MEMGATE_NEO4J_PAGECACHE  (128m)</li>
 *   <li>{@code --tx-retention P} / MEMGATE_NEO4J_TX_RETENTION ("64M size"), value of
 *       db.tx_log.rotation.retention_policy</li>
 * </ul>
 *
 * <p>Prints {@code NEO4J_READY bolt://HOST:PORT} on stdout once the default database
 * answers a query and the Bolt port accepts connections. SIGTERM/SIGINT shut the DBMS
 * down cleanly through a shutdown hook.
 */
public final class Launcher {

    private Launcher() {}

    public static void main(String[] args) throws Exception {
        String port = env("MEMGATE_NEO4J_PORT", "7687");
        String host = env("MEMGATE_NEO4J_HOST", "127.0.0.1");
        String dataDir = env("MEMGATE_NEO4J_DATA_DIR", "neo4j-data");
        String pagecache = env("MEMGATE_NEO4J_PAGECACHE", "128m");
        String txRetention = env("MEMGATE_NEO4J_TX_RETENTION", "64M size");

        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String key = a;
            String value = null;
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) {
                key = a.substring(0, eq);
                value = a.substring(eq + 1);
            }
            switch (key) {
                case "-h":
                case "--help":
                    usage();
                    return;
                case "--port":
                case "--host":
                case "--data-dir":
                case "--pagecache":
                case "--tx-retention":
                    if (value == null) {
                        if (i + 1 >= args.length) {
                            die("missing value for " + key);
                        }
                        value = args[++i];
                    }
                    break;
                default:
                    die("unknown argument: " + a);
            }
            switch (key) {
                case "--port": port = value; break;
                case "--host": host = value; break;
                case "--data-dir": dataDir = value; break;
                case "--pagecache": pagecache = value; break;
                case "--tx-retention": txRetention = value; break;
                default: break;
            }
        }

        int portNum = 0;
        try {
            portNum = Integer.parseInt(port.trim());
        } catch (NumberFormatException e) {
            die("invalid port: " + port);
        }
        if (portNum < 1 || portNum > 65535) {
            die("invalid port: " + port);
        }
        long pagecacheBytes = 0;
        try {
            pagecacheBytes = SettingValueParsers.BYTES.parse(pagecache.trim().toLowerCase(Locale.ROOT));
        } catch (RuntimeException e) {
            die("invalid page cache size '" + pagecache + "': " + e.getMessage());
        }

        Path home = Path.of(dataDir).toAbsolutePath().normalize();
        Files.createDirectories(home);

        System.out.printf("NEO4J_STARTING home=%s bolt=%s:%d pagecache=%s tx_retention='%s' java=%s%n",
                home, host, portNum, pagecache, txRetention, System.getProperty("java.version"));
        System.out.flush();

        // Registered before build() so that a SIGTERM during startup still shuts down
        // whatever has been started.
        AtomicReference<DatabaseManagementService> dbms = new AtomicReference<>();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            DatabaseManagementService ms = dbms.get();
            System.out.println("NEO4J_STOPPING");
            System.out.flush();
            try {
                if (ms != null) {
                    ms.shutdown();
                }
                System.out.println("NEO4J_STOPPED");
            } catch (Throwable t) {
                System.out.println("NEO4J_STOP_FAILED " + t);
                t.printStackTrace(System.out);
            } finally {
                System.out.flush();
                stopped.countDown();
            }
        }, "memgate-neo4j-shutdown"));

        long t0 = System.nanoTime();
        DatabaseManagementService managementService;
        try {
            managementService = new DatabaseManagementServiceBuilder(home)
                    .setUserLogProvider(new Log4jLogProvider(System.out, Level.INFO))
                    .setConfig(GraphDatabaseSettings.auth_enabled, false)
                    // no anonymous usage reporting (dbms.usage_report.enabled)
                    .setConfig(GraphDatabaseSettings.udc_enabled, false)
                    .setConfig(BoltConnector.enabled, true)
                    .setConfig(BoltConnector.listen_address, new SocketAddress(host, portNum))
                    .setConfig(BoltConnector.advertised_address, new SocketAddress(host, portNum))
                    .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                    .setConfig(HttpConnector.enabled, false)
                    .setConfig(HttpsConnector.enabled, false)
                    .setConfig(GraphDatabaseSettings.pagecache_memory, pagecacheBytes)
                    .setConfig(GraphDatabaseSettings.keep_logical_logs, txRetention)
                    .setConfig(GraphDatabaseSettings.logical_log_rotation_threshold, 16L * 1024 * 1024)
                    // Bolt's Netty event loops otherwise idle for 5 s before stopping on shutdown
                    .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 1)
                    .build();
        } catch (Throwable t) {
            // e.g. port already in use, store locked by another process, bad setting value
            System.out.println("NEO4J_FAILED " + t);
            t.printStackTrace(System.out);
            System.out.flush();
            Runtime.getRuntime().halt(1);
            return;
        }
        dbms.set(managementService);

        GraphDatabaseService db = managementService.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        if (!db.isAvailable(TimeUnit.MINUTES.toMillis(3))) {
            System.out.println("NEO4J_FAILED default database not available after 3 minutes");
            System.exit(1);
        }
        try (Transaction tx = db.beginTx()) {
            tx.execute("RETURN 1").close();
            tx.commit();
        }
        waitForPort(host, portNum, Duration.ofMinutes(1));

        long ms = (System.nanoTime() - t0) / 1_000_000;
        System.out.printf("NEO4J_READY bolt://%s:%d (started in %d ms)%n", host, portNum, ms);
        System.out.flush();

        stopped.await();
    }

    private static void waitForPort(String host, int port, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(host, port), 1000);
                return;
            } catch (IOException e) {
                if (System.nanoTime() > deadline) {
                    System.out.println("NEO4J_FAILED bolt port " + host + ":" + port + " not accepting: " + e);
                    System.exit(1);
                }
                Thread.sleep(200);
            }
        }
    }

    private static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? dflt : v;
    }

    private static void usage() {
        System.out.println("usage: java -cp 'memgate-neo4j-launcher.jar:lib/*' memgate.neo4j.Launcher"
                + " [--port N] [--host ADDR] [--data-dir DIR] [--pagecache SIZE] [--tx-retention POLICY]");
    }

    private static void die(String msg) {
        System.err.println("memgate-neo4j: " + msg);
        usage();
        System.exit(2);
    }
}
