/**
 * The Worker's live JavaScript heap, from workerd's inspector. A heap snapshot makes V8 collect all
 * its garbage first, so the heap's size after one is what the isolate still reaches: what its
 * objects keep. Resident memory (`ps`) also counts garbage V8 has not collected yet, which a
 * workerd with memory to spare leaves for long. A snapshot's serialisation raises the process's
 * resident memory for good: read resident memory in a process before its first snapshot.
 */
import type { WranglerDev } from "../test/e2e/wrangler-dev.ts";
import { inspector } from "./inspector.ts";

/** What a full collection leaves, in MiB: all of it, and the data (less compiled code, which stays once a path is run). */
export interface HeapFigures {
  total: number;
  data: number;
}

export interface LiveHeap {
  /** The heap reachable now, after a full collection. */
  measure(): Promise<HeapFigures>;
  close(): void;
}

/** V8's snapshot node types that are code and its metadata: compiled once a path runs, kept with no conversation. */
const CODE_TYPES = new Set(["code", "object shape"]);

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
}

/** The self sizes of a snapshot's nodes, summed: in all, and of those not code. */
function sizes(snapshot: Snapshot): HeapFigures {
  const fields = snapshot.snapshot.meta.node_fields;
  const [type, selfSize] = [fields.indexOf("type"), fields.indexOf("self_size")];
  const types = snapshot.snapshot.meta.node_types[0];
  let total = 0;
  let data = 0;
  for (let i = 0; i < snapshot.nodes.length; i += fields.length) {
    const size = snapshot.nodes[i + selfSize]!;
    total += size;
    if (!CODE_TYPES.has(types[snapshot.nodes[i + type]!]!)) data += size;
  }
  return { total: total / 2 ** 20, data: data / 2 ** 20 };
}

export async function liveHeap(dev: WranglerDev): Promise<LiveHeap> {
  const cdp = await inspector(dev);
  let chunks: string[] = [];
  cdp.on<{ chunk: string }>("HeapProfiler.addHeapSnapshotChunk", ({ chunk }) => chunks.push(chunk));
  return {
    async measure() {
      chunks = [];
      await cdp.send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
      return sizes(JSON.parse(chunks.join("")) as Snapshot);
    },
    close: () => cdp.close(),
  };
}
