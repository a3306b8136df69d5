/**
 * Samples of Linux `perf record` put in parts: each sample's stack, leaf first, from `perf script`, given to the first part
 * a frame names from the leaf up (SQLite, V8's compiler and collector, fetch, RPC, streams, JSON, JavaScript, the kernel's
 * network). bench:native and bench:files-native read their profiles through it.
 */
import { execFileSync } from "node:child_process";

/** The parts, by a pattern of the frame that names them; the first that matches from the leaf up wins. */
export const PARTS: Array<[string, RegExp]> = [
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
export function stacks(data: string): string[][] {
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

/** The part a sample is in; `first`: parts a bench tells apart before these. */
export function partOf(stack: string[], first: ReadonlyArray<[string, RegExp]> = []): string {
  if (stack.some((frame) => frame.includes("TailStreamTarget"))) return COLLECTOR;
  for (const frame of stack) for (const [name, pattern] of [...first, ...PARTS]) if (pattern.test(frame)) return name;
  return "other (workerd's event loop, allocation, the kernel)";
}
