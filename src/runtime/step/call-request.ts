/** Asking: the request a call's wait makes, and the event that announces it. */
import { argsOf } from "../tools/execute-tool-call.ts";
import type { Agent } from "../agent.ts";
import type { RunEvent } from "../events.ts";
import type { ToolCall } from "../messages.ts";
import { answerSchema } from "../schema/json-schema.ts";
import type { Tool } from "../tools/tool.ts";
import type { Duration } from "../duration.ts";
import type { PlannedCall } from "../handoff/rules.ts";
import type { CallWait } from "./call-record.ts";
import { approvalExpiry } from "./gate.ts";
import { publicRequest, type UserRequest } from "../wait/requests.ts";

/** The request a call's wait makes: its kind, what it shows the user, its deadline (the ask's, else the tool's, agent's or network's). */
export function requestFor(
  call: ToolCall,
  wait: CallWait,
  tool: Tool | undefined,
  agent: Agent,
  networkExpiry: Duration | undefined,
): UserRequest {
  // A delegated run's request, as it made it, waits on the delegating call: decisions name this call.
  if (wait.kind === "asked" && wait.asked.kind === "forwarded") {
    const { earlier: _theirs, recorded: _theirsToo, ...forwarded } = wait.asked.request;
    return { ...forwarded, toolCallId: call.id, ...replay(wait) };
  }
  const asked = wait.kind === "asked" && "expiresInMs" in wait.asked ? wait.asked.expiresInMs : undefined;
  const expiresAt = asked === undefined ? approvalExpiry(tool, agent, networkExpiry) : Date.now() + asked;
  const base = {
    toolCallId: call.id,
    name: call.name,
    args: argsOf(call),
    agent: agent.name,
    ...(expiresAt === undefined ? {} : { expiresAt: new Date(expiresAt).toISOString() }),
  };
  if (wait.kind === "approval") return { kind: "approval", ...base, ...approvalMessage(tool, base.args) };
  if (wait.kind === "client-tool")
    return { kind: "client-tool", ...base, ...(tool?.outputSchema ? { schema: answerSchema(tool.outputSchema) } : {}) };
  const { expiresInMs: _used, ...ask } = wait.asked as typeof wait.asked & { expiresInMs?: number };
  return { ...base, ...ask, ...replay(wait) } as UserRequest;
}

/** The tool's words for its approval; none when it has none, or they fail (the request still asks, with the arguments). */
function approvalMessage(tool: Tool | undefined, args: unknown): { message?: string } {
  try {
    const message = tool?.approvalMessage?.(args);
    return typeof message === "string" && message.trim() ? { message: message.trim() } : {};
  } catch {
    return {};
  }
}

/** What the call runs again with: its answers so far and what it remembered, each only when there is some. */
function replay(wait: Extract<CallWait, { kind: "asked" }>): Pick<UserRequest, "earlier" | "recorded"> {
  return {
    ...(wait.answers.length ? { earlier: [...wait.answers] } : {}),
    ...(wait.recorded.length ? { recorded: [...wait.recorded] } : {}),
  };
}

/** A request as its event announces it, as its kind waits: an approval as `approval-required`, any other as `input-required`. */
export function requestEvent(request: UserRequest): RunEvent {
  const shown = publicRequest(request);
  if (shown.kind === "approval") {
    const { kind: _approval, ...approval } = shown;
    return { type: "approval-required", ...approval };
  }
  return { type: "input-required", ...shown };
}

/** A tool's words for a call (`Tool.describe`), for arguments that fit it; none when it has none, or they fail. */
export function saidOf(planned: PlannedCall): { said?: string } {
  if (planned.kind !== "tool" || !planned.tool?.describe) return {};
  try {
    const args = planned.tool.parameters.safeParse(argsOf(planned.call));
    const said = args.success ? planned.tool.describe(args.data) : undefined;
    return typeof said === "string" && said.trim() ? { said: said.trim() } : {};
  } catch {
    return {};
  }
}
