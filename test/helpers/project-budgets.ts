// A vitest reporter that prints, at the end of a run, each project's wall time against the budget vitest.config.ts
// gives it: from its first test file's queueing (before its imports) to its last file's end. It prints; it never fails
// a run (speed is watched, not asserted).
import type { Reporter, TestModule } from "vitest/node";

/** Seconds of wall time each project may take, by project name. */
export type ProjectBudgets = Readonly<Record<string, number>>;

export class ProjectBudgetReporter implements Reporter {
  private readonly spans = new Map<string, { start: number; end: number; files: number }>();

  constructor(
    private readonly budgets: ProjectBudgets,
    private readonly write: (text: string) => void = (text) => void process.stdout.write(text),
  ) {}

  onTestModuleQueued(testModule: TestModule): void {
    const name = testModule.project.name;
    const now = performance.now();
    const span = this.spans.get(name);
    if (span === undefined) this.spans.set(name, { start: now, end: now, files: 0 });
  }

  onTestModuleEnd(testModule: TestModule): void {
    const span = this.spans.get(testModule.project.name);
    if (span === undefined) return;
    span.end = performance.now();
    span.files += 1;
  }

  onTestRunEnd(): void {
    if (this.spans.size === 0) return;
    const lines = Object.keys(this.budgets)
      .filter((name) => this.spans.has(name))
      .map((name) => budgetLine(name, this.spans.get(name)!, this.budgets[name]!));
    this.write(`\n Project budgets (wall time, vitest.config.ts):\n${lines.join("\n")}\n`);
  }
}

function budgetLine(name: string, span: { start: number; end: number; files: number }, budgetS: number): string {
  const seconds = (span.end - span.start) / 1000;
  const shown = seconds < 10 ? seconds.toFixed(1) : String(Math.round(seconds));
  const over = seconds > budgetS ? `  OVER BUDGET by ${Math.round(seconds - budgetS)} s` : "";
  return (
    `   ${name.padEnd(12)} ${shown.padStart(6)} s of ${budgetS} s, ${span.files} ` +
    `file${span.files === 1 ? "" : "s"}${over}`
  );
}
