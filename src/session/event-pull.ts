import { RpcTarget } from "cloudflare:workers";

/**
 * A reader's stream of encoded events, handed to the Worker over RPC as a target it pulls from,
 * one read at a time, as its own response is read. (A ReadableStream returned over RPC is drained
 * by workerd whatever the client's pace, so the Worker would buffer what a slow client has not
 * read and the per-reader lag bound in TurnBroadcast would never fire.)
 */
export class EventPull extends RpcTarget {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;

  constructor(stream: ReadableStream<Uint8Array>) {
    super();
    this.#reader = stream.getReader();
  }

  /** The next bytes of the stream, or null once it has ended. */
  async next(): Promise<Uint8Array | null> {
    const { value, done } = await this.#reader.read();
    return done ? null : value;
  }

  /** The reader left: the stream ends, and its place among the readers is given up. */
  async cancel(): Promise<void> {
    await this.#reader.cancel();
  }

  /** Every stub was released (the Worker is done with it, or gone): the same as a cancel. */
  [Symbol.dispose](): void {
    void this.#reader.cancel().catch(() => {});
  }
}
