import { BaseSequencer, type TestSpecification } from "vitest/node";
import { mergeConfig } from "vitest/config";
import { workerdSuite } from "./vitest.config.ts";

/**
 * The workerd suite as StrykerJS runs it once per mutant (stryker.workerd.json): the same projects,
 * each file of a project in one workerd (see workerdSuite), ordered for a mutant's sake. Vitest runs the slowest files first, so a mutant that one quick test
 * kills waited for every slow file before it; here the file that failed last (the likeliest killer
 * of the next mutant, which is often beside the last) runs first, then the quickest.
 */
class QuickFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const cache = this.ctx.cache;
    const state = (spec: TestSpecification) => cache.getTestSpecificationResult(spec);
    return [...files].sort((a, b) => {
      const [x, y] = [state(a), state(b)];
      if (Boolean(x?.failed) !== Boolean(y?.failed)) return x?.failed ? -1 : 1;
      return (x?.duration ?? 0) - (y?.duration ?? 0);
    });
  }
}

export default mergeConfig(workerdSuite(true), { test: { sequence: { sequencer: QuickFirst } } });
