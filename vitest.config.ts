import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

/** The Worker under test, in workerd, talking to the fake OpenAI-compatible server with the real `openai` client. */
function worker(bindings: Record<string, string> = {}, configPath = "./wrangler.toml") {
  return cloudflareTest(({ inject }) => ({
    wrangler: { configPath },
    miniflare: {
      bindings: {
        OPENAI_BASE_URL: `${inject("fakeOpenAIUrl")}/v1`,
        // Secrets of shapes no pattern would guess: only redaction by value catches them.
        OPENAI_API_KEY: "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        SESSION_SECRET: "c2Vzc2lvbi1zZWNyZXQ+Lz0=/live",
        ORDERS_API_TOKEN: 'tok 7f3a/9c2e%41 "quoted"',
        OPENAI_MAX_RETRIES: "0",
        ALLOW_ANONYMOUS: "true",
        DEV_SIGN_IN: "true",
        // `{{fake}}` in a binding is the fake server's address, `{{mcp}}` the MCP test servers'.
        ...Object.fromEntries(
          Object.entries(bindings).map(([key, value]) => [
            key,
            value
              .replace("{{fake}}", inject("fakeOpenAIUrl"))
              .replace("{{mcp}}", inject("mcpUrl"))
              .replace("{{jwks}}", inject("jwks").url)
              .replace("{{a2a}}", inject("a2aRemoteUrl")),
          ]),
        ),
      },
    },
  }));
}

/** Files that need the Worker configured otherwise than the rest (a binding read once per Durable Object). */
const CONFIGURED = ["test/configured/**/*.test.ts"];
const TRACE_EXPORT = ["test/configured-otel/**/*.test.ts"];
const MCP = ["test/configured-mcp/**/*.test.ts"];
const MCP_CODE = ["test/configured-mcp-code/**/*.test.ts"];
const USERS = ["test/configured-users/**/*.test.ts"];
const SCHEDULE = ["test/configured-schedule/**/*.test.ts"];
const REMOTE = ["test/configured-remote/**/*.test.ts"];

/**
 * The workerd suite. `forMutation` (vitest.mutation.config.ts): every file of a project in one workerd, not one
 * each (a file's own workerd takes ~2.5 s to start, more than most files take to run). Storage then lasts from
 * file to file and run to run, which the tests bear: their conversations, users and client addresses are their own.
 */
export function workerdSuite(forMutation = false) {
  const isolate = !forMutation;
  return defineConfig({
    test: {
      // The first request of a file loads the Worker's modules into workerd: seconds on a shared machine.
      testTimeout: 20_000,
      globalSetup: ["test/node/global-setup.ts"],
      projects: [
        {
          plugins: [worker()],
          test: {
            isolate,
            name: "worker",
            include: ["test/**/*.test.ts"],
            // Node-side end-to-end tests against wrangler dev run under node --test.
            exclude: [
              "test/e2e/**",
              "test/deep/**",
              // Remote agents are served by the A2A SDK in Node: test/remote runs under vitest.node.config.ts.
              "test/remote/**",
              // The app built per test, and the OpenAPI validator, which compiles schemas to code workerd does not run.
              "test/http/**",
              // The docs' links are checked against the files, which workerd cannot read.
              "test/docs/**",
              "node_modules/**",
              ...CONFIGURED,
              ...TRACE_EXPORT,
              ...MCP,
              ...MCP_CODE,
              ...USERS,
              ...SCHEDULE,
              ...REMOTE,
            ],
          },
        },
        {
          // A budget, a small total of files sent as links, and a collector with content not asked for (the trace-export project asks for it).
          plugins: [
            worker({
              CONVERSATION_BUDGET: JSON.stringify({ modelCalls: 3 }),
              CONVERSATION_FILES_MAX_BYTES: "1000",
              // Images reach the provider as signed links to the file route (test/configured/files-by-link.test.ts).
              FILES_SENT_AS: "url",
              PUBLIC_URL: "https://chat.test",
              OTEL_EXPORTER_OTLP_ENDPOINT: "{{fake}}/otlp/plain-collector",
            }),
          ],
          test: { isolate, name: "conversation-budget", include: CONFIGURED },
        },
        {
          // A collector that answers 429 to the first export, a header that is a secret, content captured, and the client's retries on.
          plugins: [
            worker({
              OTEL_EXPORTER_OTLP_ENDPOINT: "{{fake}}/otlp/busy-collector",
              OTEL_EXPORTER_OTLP_HEADERS: "x-collector-key=otlp%20secret-value-123",
              OTEL_CAPTURE_CONTENT: "true",
              OPENAI_MAX_RETRIES: "2",
            }),
          ],
          test: { isolate, name: "trace-export", include: TRACE_EXPORT },
        },
        {
          // The example network's tracking MCP server is the test server that wants a bearer token, a secret.
          plugins: [worker({ TRACKING_MCP_URL: "{{mcp}}/secured/mcp", TRACKING_MCP_TOKEN: "mcp-bearer 5f2c9a7e-secret" })],
          test: { isolate, name: "mcp", include: MCP },
        },
        {
          // A Worker of its own whose tracking server's bearer token is written in its code.
          plugins: [worker({ CODE_MCP_URL: "{{mcp}}/secured/mcp" }, "./test/configured-mcp-code/worker/wrangler.toml")],
          test: { isolate, name: "mcp-code", include: MCP_CODE },
        },
        {
          // Signed-in users: the identity provider's JWKS (test/node/jwks-server.ts), an issuer and audience, a master key, no anonymous use;
          // titles by the first message, so no title call takes a step of a test's script (model-made titles: test/worker/titles.test.ts).
          plugins: [
            worker({
              AUTH_JWKS_URL: "{{jwks}}/jwks.json",
              AUTH_ISSUER: "https://idp.test",
              AUTH_AUDIENCE: "handoff-chat",
              API_KEY: "master-key-for-the-users-tests",
              ALLOW_ANONYMOUS: "false",
              TITLE_MODEL: "off",
              // Nor does reading a conversation for memories (its model reads them in test/worker/memory-reads.test.ts).
              MEMORY_MODEL: "off",
              // A day's tokens per user: far above what the tests spend, but for the one that spends it on purpose.
              USER_DAILY_TOKENS: "1000000",
            }),
          ],
          test: { isolate, name: "users", include: USERS },
        },
        {
          // Deadlines short enough to pass within a test: approvals expire after 2 s, the support desk has 2 s to answer,
          // an orphaned upload goes after 10 s.
          // The app's webhook is the fake server's hook sink, its deliveries signed with a secret.
          plugins: [
            worker({
              APPROVAL_EXPIRES_IN: "2s",
              SUPPORT_DESK_ANSWER_WITHIN: "2s",
              NOTIFY_URL: "{{fake}}/hooks/app",
              NOTIFY_SECRET: "notify-secret 9a7c!~value",
              // A2A push notifications go to the fake server's hook sink, on loopback.
              A2A_PUSH_ALLOW_PRIVATE: "true",
              // A conversation's tokens, far above what a test spends but for the one that reports a step's tokens to reach it.
              CONVERSATION_BUDGET: JSON.stringify({ inputTokens: 1_000_000 }),
              // Uploads no message sends go after 10 s, the least there is, so a test watches one go.
              FILE_ORPHAN_AFTER: "10s",
            }),
          ],
          test: { isolate, name: "schedule", include: SCHEDULE },
        },
        {
          // A network whose billing agent is remote: the A2A agent the SDK serves in Node, its bearer token a secret.
          plugins: [
            worker(
              { REMOTE_A2A_URL: "{{a2a}}", BILLING_AGENT_TOKEN: "remote-token 3c9f-secret" },
              "./test/configured-remote/worker/wrangler.toml",
            ),
          ],
          test: { isolate, name: "remote", include: REMOTE },
        },
        {
          // The session property again, with deadlines on every approval and on the person, long enough never to pass by
          // themselves: the property's alarm operation makes one due, as time passing would.
          plugins: [worker({ APPROVAL_EXPIRES_IN: "1h", SUPPORT_DESK_ANSWER_WITHIN: "1h" })],
          test: { isolate, name: "session-deadlines", include: ["test/properties/session.property.test.ts"] },
        },
      ],
    },
  });
}

export default workerdSuite();
