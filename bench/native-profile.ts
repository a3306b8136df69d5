/**
 * Where the Worker's workerd spends a turn natively, which workerd's inspector cannot see (its
 * profile leaves ~20 ms a turn to no frame): Linux `perf record` of the Worker's workerd process
 * (its binary keeps its symbols) over socket turns of bench/peers/ours, each sample put in the first
 * part its stack names from the leaf up; wrangler dev's trace collector (its tail Worker, fed every
 * span: each SQL statement, fetch and log line) is told apart wherever it is on the stack.
 *
 *   npm run bench:native -- [--turns 40]      (needs perf: Debian's linux-perf)
 */
import { execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import { OursSocket, oursTurn } from "./peer-clients.ts";
import { startToolTurnDev } from "./tool-turn-dev.ts";
import { workerdRoles } from "./workerd-processes.ts";

const at = process.argv.indexOf("--turns");
const TURNS = at < 0 ? 40 : Number(process.argv[at + 1]);

/** The parts, by a pattern of the frame that names them; the first that matches from the leaf up wins. */
const PARTS: Array<[string, RegExp]> = [
  [
    "SQLite (the statements, their commits and fsync)",
    /^sqlite3|SqliteDatabase|ActorSqlite|SqlStorage|^fsync|^__libc_pwrite|pager|^walWrite/,
  ],
  ["V8 compiling (JIT)", /maglev|Maglev|turbofan|Turbofan|compiler::|Sparkplug|baseline::Baseline|Compiler::/],
  ["V8 garbage collection", /GarbageCollect|Scavenge|Heap::|MarkCompact|cppgc::internal::(Marker|Sweeper)|ConcurrentMarking|MinorMark/],
  ["WebSocket frames", /WebSocket/],
  ["fetch to the provider", /fetchImpl|handleHttpFetchResponse|Request::constructor|HttpClientImpl|NetworkHttpClient|HttpClientAdapter/],
  ["HTTP in", /hyper|HttpServer|WorkerEntrypoint::request|HttpService/],
  ["RPC", /JsRpc|capnp::|Rpc/],
  ["streams", /ReadableStream|WritableStream|pumpTo|Pump|TransformStream|ReaderImpl|ValueQueue|ByteQueue/],
  ["JSON", /Json|JSON/],
  [
    "JavaScript (builtins and the runtime)",
    /^Builtins_|^v8::internal::Runtime|^v8::internal::(Factory|String|Object|JSObject|LookupIterator)|Interpreter/,
  ],
  ["the kernel's network", /tcp_|sock_|ip_|inet_|__sys_send|__sys_recv|__send|recv/],
];
const COLLECTOR = "wrangler dev's trace collector (a tail Worker)";

/** Each sample's stack, leaf first, from `perf script`. */
function stacks(data: string): string[][] {
  const text = execFileSync("perf", ["script", "-i", data, "-F", "ip,sym"], {
    encoding: "utf8",
    maxBuffer: 1 << 30,
    stdio: ["ignore", "pipe", "ignore"],
  });
  return text
    .split("\n\n")
    .map((block) =>
      block
        .split("\n")
        .map((line) => line.trim().split(" ").slice(1).join(" "))
        .filter(Boolean),
    )
    .filter((stack) => stack.length > 0);
}

function partOf(stack: string[]): string {
  if (stack.some((frame) => frame.includes("TailStreamTarget"))) return COLLECTOR;
  for (const frame of stack) for (const [name, pattern] of PARTS) if (pattern.test(frame)) return name;
  return "other (workerd's event loop, allocation, the kernel)";
}

const { dev, scratch, stop } = await startToolTurnDev({ name: "native", scenario: "scnnat", answers: TURNS + 12 });
const data = join(scratch, "perf.data");
try {
  await oursTurn(dev.url, "native", "where is A1001? [scnnat]");
  const socket = await OursSocket.open(dev.url, "native");
  for (let t = 0; t < 10; t++) await socket.turn(`warm ${t}`);
  const perf = spawn("perf", ["record", "-F", "4999", "-g", "-o", data, "-p", workerdRoles(dev).worker], { stdio: "ignore" });
  await new Promise((resolve) => setTimeout(resolve, 500));
  for (let t = 0; t < TURNS; t++) await socket.turn(`and A1001 now? ${t}`);
  perf.kill("SIGINT");
  await new Promise((resolve) => perf.on("exit", resolve));
  socket.close();
  const counts = new Map<string, number>();
  const all = stacks(data);
  for (const stack of all) counts.set(partOf(stack), (counts.get(partOf(stack)) ?? 0) + 1);
  console.log(`The Worker's workerd over ${TURNS} socket turns (${all.length} samples at 4999 Hz):\n\n| part | share |\n|---|---:|`);
  for (const [name, n] of [...counts].sort((a, b) => b[1] - a[1])) console.log(`| ${name} | ${((100 * n) / all.length).toFixed(1)}% |`);
} finally {
  await stop();
}
