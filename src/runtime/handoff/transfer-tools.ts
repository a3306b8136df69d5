/** What the model sees of handoffs: the transfer tools' specs, and reading its calls of them back. */
import * as z from "zod";
import type { ToolCall } from "../messages.ts";
import type { ToolSpec } from "../tools/tool.ts";
import type { HandoffEdge } from "./handoff.ts";
import { TRANSFER_PREFIX } from "../tools/tool-names.ts";

/**
 * How handoffs look to the model. `per-target`: one `transfer_to_<name>` tool per target.
 * `single`: one `transfer_to_agent` tool whose `agent_name` is an enum of the valid targets.
 * `named`: one `handoff` tool with `name` and `reason`.
 */
export type TransferStyle = "per-target" | "single" | "named";

/** The one transfer tool of the `single` style. */
export const SINGLE_TRANSFER_TOOL = "transfer_to_agent";
/** The one transfer tool of the `named` style. */
export const NAMED_TRANSFER_TOOL = "handoff";

const REASON = { type: "string", description: "Why this agent should take over, in one sentence." };

interface StyleOptions {
  toolStyle: TransferStyle;
  describe?: (agentName: string) => string;
}

/** The transfer tools an agent is offered for its enabled edges. */
export function transferSpecs(options: StyleOptions, edges: readonly HandoffEdge[]): ToolSpec[] {
  if (edges.length === 0) return [];
  const about = (edge: HandoffEdge) => (options.describe ? options.describe(edge.agent.name) : edge.agent.description);
  const style = TRANSFER_STYLES[options.toolStyle] as StyleSpecs | undefined;
  if (!style) throw new TypeError(`Unknown transfer tool style '${String(options.toolStyle)}'.`);
  return style(edges, about);
}

/** A style's tools for the edges; `about` says what each target does. */
type StyleSpecs = (edges: readonly HandoffEdge[], about: (edge: HandoffEdge) => string) => ToolSpec[];

/** Each style of transfer tool: one per target, one `transfer_to_agent` naming the target, or the named-agent form. */
const TRANSFER_STYLES: Record<TransferStyle, StyleSpecs> = {
  "per-target": (edges, about) =>
    edges.map((edge) => {
      const input = inputJsonSchema(edge);
      const sentence = `Transfer the conversation to '${edge.agent.name}'.`;
      const detail = about(edge);
      return {
        name: edge.toolName,
        description: detail ? `${sentence} ${detail}` : sentence,
        parameters: {
          type: "object",
          properties: { reason: REASON, ...(input?.properties ?? {}) },
          ...(input?.required?.length ? { required: input.required } : {}),
          additionalProperties: false,
        },
      };
    }),
  single: (edges, about) => [
    {
      name: SINGLE_TRANSFER_TOOL,
      description: `Transfer the conversation to a better-suited agent, who takes over from here. Agents:\n${edges.map((e) => describeTarget(e, about(e))).join("\n")}`,
      parameters: {
        type: "object",
        properties: { agent_name: { type: "string", enum: edges.map((e) => e.agent.name) }, reason: REASON, ...inputProperty(edges) },
        required: ["agent_name"],
        additionalProperties: false,
      },
    },
  ],
  named: (edges, about) => [
    {
      name: NAMED_TRANSFER_TOOL,
      description: `Transfer control to another specialized agent. Use this when the user's request is better handled by a different agent. Agents:\n${edges.map((e) => describeTarget(e, about(e))).join("\n")}`,
      parameters: {
        type: "object",
        properties: {
          name: {
            type: "string",
            description: `Name of the agent to hand off to. Available agents: ${edges.map((e) => e.agent.name).join(", ")}`,
          },
          reason: { type: "string", description: "Brief explanation of why this handoff is needed" },
          ...inputProperty(edges),
        },
        required: ["name", "reason"],
        additionalProperties: false,
      },
    },
  ],
};

/** A call read as a transfer request, before the loop's rules decide whether it is taken. */
export interface TransferRequest {
  /** The enabled edge it asks for, or undefined when it names no valid target. */
  edge: HandoffEdge | undefined;
  /** What the model asked for, for the refusal message. */
  asked: string;
  reason?: string;
  input: Record<string, unknown>;
}

/** Reads a call as a transfer in the network's style; null when it is not a transfer call at all. */
export function readTransfer(call: ToolCall, style: TransferStyle, transfers: ReadonlyMap<string, HandoffEdge>): TransferRequest | null {
  const args = parseObject(call.arguments);
  const reason = typeof args.reason === "string" && args.reason.trim() ? args.reason.trim() : undefined;
  const withReason = (request: Omit<TransferRequest, "reason">): TransferRequest => (reason ? { ...request, reason } : request);
  if (style === "single" && call.name === SINGLE_TRANSFER_TOOL) return byName(args.agent_name);
  if (style === "named" && call.name === NAMED_TRANSFER_TOOL) return byName(args.name);
  if (!call.name.startsWith(TRANSFER_PREFIX)) return null;
  // A per-target tool, or a per-target name the model invented under another style.
  const edge = style === "per-target" ? [...transfers.values()].find((e) => e.toolName === call.name) : undefined;
  const { reason: _reason, ...input } = args;
  return withReason({ edge, asked: call.name, input });

  function byName(name: unknown): TransferRequest {
    const asked = typeof name === "string" ? name.trim() : "";
    const input = args.input && typeof args.input === "object" && !Array.isArray(args.input) ? (args.input as Record<string, unknown>) : {};
    return withReason({ edge: transfers.get(asked), asked: asked || "(no name)", input });
  }
}

/** The valid targets, as the refusal lists them. */
export function validTargets(style: TransferStyle, transfers: ReadonlyMap<string, HandoffEdge>): string {
  const edges = [...transfers.values()];
  if (edges.length === 0) return "This agent has no transfers.";
  return style === "per-target"
    ? `Available: ${edges.map((e) => `${e.toolName} (${e.agent.name})`).join(", ")}.`
    : `Available agents: ${edges.map((e) => e.agent.name).join(", ")}.`;
}

function describeTarget(edge: HandoffEdge, about: string): string {
  const input = inputJsonSchema(edge);
  return `- ${edge.agent.name}${about ? `: ${about}` : ""}${input ? ` (input: ${JSON.stringify(input)})` : ""}`;
}

function inputProperty(edges: readonly HandoffEdge[]): Record<string, unknown> {
  return edges.some((e) => e.inputSchema)
    ? { input: { type: "object", description: "The input the chosen agent requires, as listed for it." } }
    : {};
}

function inputJsonSchema(edge: HandoffEdge): { properties?: Record<string, unknown>; required?: string[] } | undefined {
  if (!edge.inputSchema) return undefined;
  const { $schema: _ignored, ...schema } = z.toJSONSchema(edge.inputSchema) as {
    $schema?: string;
    properties?: Record<string, unknown>;
    required?: string[];
  };
  return schema;
}

/** A transfer is a routing decision: malformed arguments read as no arguments rather than failing it. */
function parseObject(raw: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(raw || "{}");
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
