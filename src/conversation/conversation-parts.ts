/** The parts of a conversation's Durable Object, put together once per instance from its environment and setup. */
import { type Config, redactorFor, runSettings } from "../config.ts";
import { noMcpClient } from "../mcp/tool-lists.ts";
import type { Redactor } from "../runtime/redact.ts";
import type { Model } from "../runtime/ports/model-port.ts";
import type { Network } from "../runtime/network.ts";
import type { RunTurnOptions } from "../runtime/run-options.ts";
import type { WorkerVars } from "../worker-vars.ts";
import { createModel, unconfiguredModel } from "./configured-model.ts";
import { OfflineModel } from "../models/offline-model.ts";
import type { ConversationSetup } from "./conversation-api.ts";
import { ConversationStore } from "./storage/conversation-store.ts";
import { agentsModel, titleMaker } from "./conversation-titles.ts";
import { ConversationMemory } from "./conversation-memory.ts";
import { InboxLink } from "./inbox-link.ts";
import { headerValues } from "./header-secrets.ts";
import type { HostEnv } from "../runtime/ports/host-env.ts";
import { SqlToolListCache } from "./storage/mcp-tool-cache.ts";
import { exporterFor } from "../traces/otlp-export.ts";
import { Notifier } from "./schedule/notifier.ts";
import { ProtocolParts } from "./protocol-parts.ts";
import { PersonHold } from "./person-hold.ts";
import { redactingModel } from "./redacting-model.ts";
import { ScheduledWork } from "./schedule/scheduled-work.ts";
import { BackgroundWork } from "./schedule/background-work.ts";
import { ConversationSockets } from "./sockets.ts";
import { CommitEffects } from "./commit-effects.ts";
import { EventEffects } from "./event-effects.ts";
import { TurnAdmission } from "./turn-admission.ts";
import { TurnDriver } from "./turns/turn-driver.ts";
import { ConversationFiles } from "./files/conversation-files.ts";

export interface ConversationParts {
  redactor: Redactor;
  store: ConversationStore;
  /** While a person holds the conversation: their messages, their hand back, the followers and the desk. */
  hold: PersonHold;
  /** Its entry in its owner's inbox, when a signed-in user owns it. */
  inbox: InboxLink;
  driver: TurnDriver;
  /** What the alarm runs: the schedule's due entries. */
  work: ScheduledWork;
  /** Background delegations running: stopped when their entry goes, or the conversation. */
  background: BackgroundWork;
  /** The open WebSockets (hibernation API), told every event. */
  sockets: ConversationSockets;
  /** The one admission every way in passes. */
  admission: TurnAdmission;
  /** What follows each write: the alarm, the inbox. */
  effects: CommitEffects;
  /** What follows each stored event: a leg's end, a person's answer or hand back. */
  events: EventEffects;
  /** Its files: checked, stored in the FILES bucket by reference, read for the model and tools. */
  files: ConversationFiles;
  /** Its owner's memory: the port each leg runs with, and the reads at its checkpoints. */
  memory: ConversationMemory;
  /** What the Worker's protocols keep in it and send from it (A2A's push configs and pushes). */
  protocols: ProtocolParts;
}

export function assembleConversation(
  ctx: DurableObjectState,
  env: WorkerVars,
  config: Config,
  setup: ConversationSetup,
): ConversationParts {
  const { network } = setup;
  // The MCP servers' and remote agents' header values are secrets too, wherever they came from.
  const redactor = redactorFor(env).with(headerValues(network, env));
  const log = (message: string) => console.warn(redactor.text(message));
  const store = new ConversationStore(ctx.storage);
  const notifier = new Notifier(store, config, redactor, log);
  const sockets = new ConversationSockets(ctx, redactor);
  const hold = new PersonHold(store, redactor, env, sockets.tap, network);
  const providerRequests = { sent: 0 };
  const model = modelFor(config, setup, redactor, providerRequests);
  const titles = titleMaker(config, network, store, model, redactor);
  const inbox = new InboxLink(store, redactor, env, titles && { maker: titles, waitUntil: ctx.waitUntil.bind(ctx) });
  const waitUntil = (promise: Promise<unknown>) => ctx.waitUntil(promise);
  const memory = memoryOf(env, config, store, redactor, model, network);
  const protocols = new ProtocolParts(setup.parts ?? [], store, redactor);
  const events = new EventEffects({ store, network, inbox, notifier, protocols, hold, log, waitUntil, memory });
  const files = filesOf(store, env, config, redactor);
  const ports = {
    model,
    files,
    mcp: setup.mcp?.({ env, cache: new SqlToolListCache(ctx.storage.sql), log }) ?? noMcpClient,
    ...(setup.remote ? { remote: setup.remote(env as HostEnv) } : {}),
    limits: { ...runSettings(config).limits, ...setup.limits },
  };
  const exporter = exporterFor(config, log);
  const driver = new TurnDriver({
    store,
    redactor,
    inbox,
    settled: () => events.settled(),
    exporter,
    options: { network, ...ports, ...storedRuns(store, redactor) },
    memory: () => memory.port(),
    traces: { keep: config.TRACE_TURNS, captureContent: config.OTEL_CAPTURE_CONTENT },
    providerRequests: () => providerRequests.sent,
    waitUntil,
    tap: sockets.tap,
  });
  const admission = new TurnAdmission({ store, driver, network, config, env });
  const background = new BackgroundWork({ store, network, redactor, run: ports, tell: sockets.tell, exporter, notifier, waitUntil, log });
  const work = new ScheduledWork({ store, driver, hold, network, notifier, admission, background, files, memory });
  const effects = new CommitEffects({ store, storage: ctx.storage, inbox, waitUntil, log });
  return { redactor, store, hold, inbox, driver, work, background, sockets, admission, effects, events, files, memory, protocols };
}

/** How a leg's tools schedule work and its delegated runs resume: through the conversation's storage. */
function storedRuns(store: ConversationStore, redactor: Redactor): Pick<RunTurnOptions, "scheduler" | "delegations"> {
  return {
    // What tools schedule is stored redacted, as everything else.
    scheduler: {
      schedule: (request) => store.schedule.schedule(redactor.value(request)),
      delegate: (request) => store.schedule.delegate(redactor.value(request)),
    },
    // A delegated run that waited for the user resumes from its stored wait.
    delegations: { readDelegation: (path) => store.readDelegation(path) },
  };
}

/** Its owner's memory: MEMORY_MODEL reads the conversation for it (the agents' model by default; `off`: no reads). */
function memoryOf(env: WorkerVars, config: Config, store: ConversationStore, redactor: Redactor, model: Model, network: Network) {
  const modelName = config.MEMORY_MODEL ?? agentsModel(network);
  return new ConversationMemory({
    env,
    config,
    store,
    redactor,
    model,
    modelName: modelName === "off" ? null : modelName,
    keepTraces: config.TRACE_TURNS,
    log: (message) => console.warn(message),
  });
}

/** The conversation's files: references in its storage, bytes in the FILES bucket, held to the configured limits. */
function filesOf(store: ConversationStore, env: WorkerVars, config: Config, redactor: Redactor): ConversationFiles {
  return new ConversationFiles({
    ledger: store.files,
    bucket: (env as { FILES?: R2Bucket }).FILES,
    limits: { maxBytes: config.FILE_MAX_BYTES, perMessage: config.FILES_PER_MESSAGE, perConversation: config.CONVERSATION_FILES_MAX_BYTES },
    redactor,
    conversationId: () => store.state()!.conversationId,
    keptMs: config.FILE_ORPHAN_AFTER,
    links: linksOf(config),
  });
}

/** Where images are sent as signed links (FILES_SENT_AS=url; readConfig has checked what it needs). */
function linksOf(config: Config): { secret: string; origin: string } | undefined {
  const secret = config.SESSION_SECRET ?? config.API_KEY;
  return config.FILES_SENT_AS === "url" && config.PUBLIC_URL && secret ? { secret, origin: config.PUBLIC_URL } : undefined;
}

/** The model turns call: the configured provider's, else the setup's offline model, else the demo's; redacted on the way in and out. */
function modelFor(config: Config, setup: ConversationSetup, redactor: Redactor, providerRequests: { sent: number }) {
  return redactingModel(
    createModel(config, redactor, providerRequests) ??
      setup.offlineModel ??
      (config.OFFLINE_MODEL ? new OfflineModel() : unconfiguredModel()),
    redactor,
  );
}
