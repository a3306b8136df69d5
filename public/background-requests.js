// What a background delegation asks the user (an approval, a question…). The run waits for it beside
// the conversation, so its cards leave the composer free. They come over the socket as the run asks,
// or from the view after a reload; each is decided by the route every request is answered by, and
// the run carries on from the conversation's alarm once none is left.
import { requestCard } from "/request-cards.js";

/** `place` adds a node to the log; `decide(decision)` sends one decision and resolves whether it was taken. */
export function backgroundRequests({ place, decide }) {
  const cards = new Map(); // toolCallId → its card
  const draw = (request) => {
    if (!cards.has(request.toolCallId)) cards.set(request.toolCallId, requestCard(request, place, decide));
  };
  return {
    draw,
    /** A frame of a background run: a request drawn as it is asked, its card closed once its call has a result. */
    frame(event) {
      const inner = event.event;
      if (inner.type === "approval-required") draw({ ...inner, kind: "approval" });
      if (inner.type === "input-required") draw(inner);
      if (inner.type === "tool-result") cards.get(inner.toolCallId)?.close("");
    },
    clear: () => cards.clear(),
  };
}
