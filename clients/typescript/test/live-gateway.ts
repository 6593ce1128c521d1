// Starts the live gateways of clients/testkit/live_gateway.py (real `python -m gateway.cli
// serve` processes from this checkout) and stops them again.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import path from "node:path";

export interface LiveGateways {
  plain: string;
  mtls: string;
  keys: Record<string, string>;
  master: string;
  reads_per_agent: number;
  retry_after_ms: number;
  ca: string;
  client_cert: string;
  client_key: string;
  tls_agent: string;
  stop: () => Promise<void>;
}

// dist/test/live-gateway.js -> the repository root
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");

export async function startGateways(): Promise<LiveGateways> {
  const python = process.env.PYTHON ?? "python";
  const child: ChildProcess = spawn(python, [path.join(ROOT, "clients/testkit/live_gateway.py")], {
    cwd: ROOT,
    env: { ...process.env, PYTHONPATH: ROOT },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`live_gateway.py exited (${code}) before it was ready`)));
  });
  const info = JSON.parse(first) as Omit<LiveGateways, "stop">;
  return {
    ...info,
    stop: async () => {
      child.stdin!.end();
      await exited;
    },
  };
}
