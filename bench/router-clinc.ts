/**
 * The lexical router and what no agent covers: CLINC150 (examples/clinc, CC BY 3.0; SOURCE.md),
 * its 10 domains as the agents of a network, trained on its in-scope train split, measured on its
 * in-scope test split (4,500) and its out-of-scope test queries (1,000). A query is routed when the
 * router's confidence reaches the threshold; out-of-scope recall is the share of out-of-scope
 * queries it does not route (it abstains: the entry agent's model answers them). Printed for the
 * router trained on in-scope queries only, and for one that also learns an `oos` label from the
 * 100 out-of-scope training queries (a query it labels `oos` is not routed). `npm run bench:router-clinc`
 */
import { readFileSync } from "node:fs";
import { LexicalRouter, trainLexicalRouter } from "../src/router/lexical-router.ts";

const data = JSON.parse(readFileSync("examples/clinc/clinc150.json", "utf8")) as {
  domainOf: Record<string, string>;
  train: Array<[string, string]>;
  test: Array<[string, string]>;
  oos_train: string[];
  oos_test: string[];
};
const inScope = data.train.map(([text, intent]) => ({ text, label: data.domainOf[intent]! }));

function measure(name: string, router: LexicalRouter) {
  const test = data.test.map(([text, intent]) => ({ route: router.route(text), want: data.domainOf[intent]! }));
  const oos = data.oos_test.map((text) => router.route(text));
  console.log(
    `\n${name}\n\n| threshold | in-scope routed | in-scope accuracy of those routed | in-scope accuracy overall | out-of-scope recall (not routed) |\n|---|---|---|---|---|`,
  );
  for (const threshold of [0, 0.5, 0.7, 0.8, 0.9, 0.95]) {
    const routes = (r: { label: string; confidence: number }) => r.label !== "oos" && r.confidence >= threshold;
    const routed = test.filter((t) => routes(t.route));
    const right = routed.filter((t) => t.route.label === t.want).length;
    const pct = (n: number, of: number) => `${((n / Math.max(1, of)) * 100).toFixed(1)} %`;
    console.log(
      `| ${threshold} | ${pct(routed.length, test.length)} | ${pct(right, routed.length)} | ${pct(right, test.length)} | ${pct(oos.filter((r) => !routes(r)).length, oos.length)} |`,
    );
  }
}

console.log(
  `CLINC150: ${data.train.length} in-scope training queries over 10 domains, ${data.test.length} in-scope and ${data.oos_test.length} out-of-scope test queries`,
);
measure("trained on in-scope queries only", new LexicalRouter(trainLexicalRouter(inScope)));
measure(
  "with an `oos` label learned from the 100 out-of-scope training queries",
  new LexicalRouter(trainLexicalRouter([...inScope, ...data.oos_train.map((text) => ({ text, label: "oos" }))])),
);
