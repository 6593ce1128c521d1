// A TCP proxy to a gateway that loses one answer: on the first connection that carries `marker`
// it forwards nothing back from then on, and cuts the connection after `holdMs` (the gateway
// serves the call and answers into the void). The client sees UNAVAILABLE for a call the
// gateway did carry out: what a retry's idempotency key is for.
import { connect, createServer, type Server, type Socket } from "node:net";

export interface LossyProxy {
  address: string;
  fired: () => boolean;
  close: () => Promise<void>;
}

export async function startLossyProxy(upstream: string, marker: Buffer, holdMs: number): Promise<LossyProxy> {
  const [host, port] = [upstream.slice(0, upstream.lastIndexOf(":")), Number(upstream.slice(upstream.lastIndexOf(":") + 1))];
  let fired = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const gateway = connect(port, host);
    sockets.add(client).add(gateway);
    let seen = Buffer.alloc(0);
    let cut = false;
    const closeBoth = () => {
      client.destroy();
      gateway.destroy();
    };
    client.on("data", (chunk: Buffer) => {
      if (!fired) {
        seen = Buffer.concat([seen, chunk]);
        if (seen.includes(marker)) {
          fired = cut = true;
          setTimeout(closeBoth, holdMs);
        }
      }
      gateway.write(chunk);
    });
    gateway.on("data", (chunk: Buffer) => {
      if (!cut) client.write(chunk);
    });
    for (const s of [client, gateway]) {
      s.on("error", closeBoth);
      s.on("close", closeBoth);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port: own } = server.address() as { port: number };
  return {
    address: `127.0.0.1:${own}`,
    fired: () => fired,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
