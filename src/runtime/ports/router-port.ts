/**
 * The router port: a classifier that hands the conversation on before any model call when it is
 * sure (the lexical router of `handoff-runtime/router`, an embedding router, a rule). Given the
 * user's message while an agent with a router holds the conversation, it answers a target agent
 * with a confidence, or abstains (null). At or above the threshold, the runtime makes the handoff
 * itself, by the same rules as a model's transfer call, recorded as made by the router with its
 * score; below it, or when it abstains, the agent's model decides as it would without one.
 */
import type { Message } from "../messages.ts";

/** What a router is asked. */
export interface RouteRequest {
  /** The user's message that starts the turn. */
  message: string;
  /** The agent holding the conversation. */
  agent: string;
  /** The agents it may hand to now (its enabled transfer targets). */
  targets: readonly string[];
  /** The conversation so far, the user's message last. */
  history: readonly Message[];
}

/** A router's answer: the agent it is for, and how sure (0 to 1). */
export interface RouteDecision {
  agent: string;
  confidence: number;
}

/** A classifier that names the agent a user's message is for, with how sure it is, or abstains (null). */
export interface Router {
  route(request: RouteRequest): RouteDecision | null | Promise<RouteDecision | null>;
}

/** A router as an agent (or the network's entry agent) is given it. */
export interface RouterOptions {
  router: Router;
  /** The confidence at or above which it hands over itself (0 to 1). */
  threshold: number;
  /** How events, history and traces name it ("router" when absent). */
  name?: string;
}

/** What a handoff made by a router records: its name and the confidence it had. */
export interface RoutedBy {
  name: string;
  confidence: number;
}
