// The budget reporter (test/helpers/project-budgets.ts): each project's wall time, from its first file queued to its
// last file's end, printed beside its budget, over budget said; projects that did not run are left out.
import { afterEach, describe, expect, it, vi } from "vitest";
import type { TestModule } from "vitest/node";
import { ProjectBudgetReporter } from "./project-budgets.js";

const file = (project: string) => ({ project: { name: project } }) as unknown as TestModule;

afterEach(() => void vi.restoreAllMocks());

describe("the project budget reporter", () => {
  it("prints each project's span against its budget, saying which went over", () => {
    const clock = vi.spyOn(performance, "now");
    const out: string[] = [];
    const reporter = new ProjectBudgetReporter({ unit: 60, integration: 630, soak: 210 }, (t) => void out.push(t));
    // unit: queued at 0 and 1 s, ended at 2 and 3.5 s; integration: 4 s to 704 s.
    for (const [at, call] of [
      [0, () => reporter.onTestModuleQueued(file("unit"))],
      [1000, () => reporter.onTestModuleQueued(file("unit"))],
      [2000, () => reporter.onTestModuleEnd(file("unit"))],
      [3500, () => reporter.onTestModuleEnd(file("unit"))],
      [4000, () => reporter.onTestModuleQueued(file("integration"))],
      [704_000, () => reporter.onTestModuleEnd(file("integration"))],
    ] as const) {
      clock.mockReturnValueOnce(at);
      call();
    }
    reporter.onTestRunEnd();
    const lines = out.join("").split("\n");
    expect(lines.find((l) => l.includes("unit"))).toMatch(/unit\s+3\.5 s of 60 s, 2 files$/);
    expect(lines.find((l) => l.includes("integration"))).toMatch(
      /integration\s+700 s of 630 s, 1 file {2}OVER BUDGET by 70 s$/,
    );
    expect(out.join("")).not.toContain("soak");
  });

  it("prints nothing for a run that ran no file", () => {
    const out: string[] = [];
    new ProjectBudgetReporter({ unit: 60 }, (t) => void out.push(t)).onTestRunEnd();
    expect(out).toEqual([]);
  });
});
