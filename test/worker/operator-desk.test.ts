/**
 * The operator desk's own rows (the Durable Object every conversation held by a person writes to):
 * what a card keeps, what an update keeps and replaces, how a deadline is cleared, and a desk
 * stored before cards had titles, users and deadlines, which gains the columns and keeps its rows.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { deskOf, OperatorDesk } from "../../src/desk/operator-desk.ts";

const aDesk = () => env.OPERATOR_DESK!.getByName(`desk-test-${crypto.randomUUID()}`);
const card = { conversationId: "c1", person: "front-desk", since: 1_000, updatedAt: 1_000, preview: "where is my parcel?" };

describe("the operator desk", () => {
  it("keeps a new card waiting, with its title, user, deadline and a preview cut to 200 characters", async () => {
    const desk = aDesk();
    await desk.put({ ...card, preview: "x".repeat(300), title: "Parcel", user: { id: "u1", name: "Cleo" }, answerBy: 5_000 });
    expect(await desk.list()).toEqual([
      {
        conversationId: "c1",
        status: "waiting",
        person: "front-desk",
        since: 1_000,
        updatedAt: 1_000,
        preview: "x".repeat(200),
        title: "Parcel",
        user: { id: "u1", name: "Cleo" },
        answerBy: 5_000,
      },
    ]);
  });

  it("leaves out what a card was never given", async () => {
    const desk = aDesk();
    await desk.put(card);
    expect(await desk.list()).toEqual([{ ...card, status: "waiting" }]);
  });

  it("updates the preview, status and operator, keeps since, title, user and a deadline not given, and clears a deadline given as null", async () => {
    const desk = aDesk();
    await desk.put({ ...card, title: "Parcel", user: { id: "u1" }, answerBy: 5_000 });
    await desk.put({ ...card, since: 2_000, updatedAt: 3_000, preview: "hello?", status: "held", operator: { id: "op1", name: "Olga" } });
    expect(await desk.list()).toEqual([
      {
        ...card,
        updatedAt: 3_000,
        preview: "hello?",
        status: "held",
        operator: { id: "op1", name: "Olga" },
        title: "Parcel",
        user: { id: "u1" },
        answerBy: 5_000,
      },
    ]);
    await desk.put({ ...card, updatedAt: 4_000, answerBy: null });
    const [entry] = await desk.list();
    expect(entry).not.toHaveProperty("answerBy");
    expect(entry).toMatchObject({ status: "held", operator: { name: "Olga" }, title: "Parcel" });
    expect(await desk.list("waiting")).toEqual([]);
    expect((await desk.list("held")).map((e) => e.conversationId)).toEqual(["c1"]);
  });

  it("gains the later columns on a desk stored before them, keeping its rows, and starts again over its own table", async () => {
    await runInDurableObject(aDesk(), (_instance, state) => {
      state.storage.sql.exec("DROP TABLE desk");
      state.storage.sql.exec(
        `CREATE TABLE desk (conversation_id TEXT PRIMARY KEY, status TEXT NOT NULL, person TEXT NOT NULL,
           since INTEGER NOT NULL, updated_at INTEGER NOT NULL, preview TEXT NOT NULL)`,
      );
      state.storage.sql.exec(`INSERT INTO desk VALUES ('old', 'held', 'front-desk', 10, 20, 'an old card')`);
      const upgraded = new OperatorDesk(state, {});
      // A second start over the upgraded table adds nothing twice.
      const again = new OperatorDesk(state, {});
      const columns = state.storage.sql.exec<{ name: string }>("PRAGMA table_info(desk)").toArray();
      expect(columns.map((c) => c.name)).toEqual([
        "conversation_id",
        "status",
        "person",
        "since",
        "updated_at",
        "preview",
        "operator",
        "title",
        "user",
        "answer_by",
      ]);
      return Promise.all([upgraded.list(), again.list()]).then(([first, second]) => {
        expect(first).toEqual([
          { conversationId: "old", status: "held", person: "front-desk", since: 10, updatedAt: 20, preview: "an old card" },
        ]);
        expect(second).toEqual(first);
      });
    });
  });

  it("is the object named `desk` of the environment's OPERATOR_DESK, and none without the binding", async () => {
    const conversationId = `named-${crypto.randomUUID()}`;
    await deskOf(env)!.put({ ...card, conversationId });
    const listed = await env.OPERATOR_DESK!.getByName("desk").list();
    expect(listed.map((e) => e.conversationId)).toContain(conversationId);
    await deskOf(env)!.remove(conversationId);
    expect((await env.OPERATOR_DESK!.getByName("desk").list()).map((e) => e.conversationId)).not.toContain(conversationId);
    expect(deskOf({})).toBeNull();
  });
});
