// The verdict in words, the same in every medium: the summary line, the certificate's banner, the job summary.
import type { RunReport } from "../../report.js";

const INTERFACE_NAMES = { grpc: "gRPC", http: "HTTP", client: "the client" } as const;

/** What was judged: "gRPC 127.0.0.1:5, HTTP http://..., and the contract proto (shipped)". */
export function scopeWords(report: RunReport): string {
  const parts = report.scope.interfaces.map((i) => `${INTERFACE_NAMES[i]} ${report.target[i] ?? ""}`.trim());
  if (report.target.image) parts.unshift(`image ${report.target.image}`);
  return [...parts, `the contract ${report.scope.contract}`].join(", ");
}

/**
 * The profiles that gated and whether --strict was on: "contract profile" or "contract and protocol profiles,
 * --strict".
 */
export function gateWords(report: RunReport): string {
  const p = report.selection.profiles;
  return (
    `${p.join(" and ")} ` +
    `profile${p.length > 1 ? "s" : ""}${report.selection.strict ? ", --strict (SHOULD failures gate)" : ""}`
  );
}

/** --only/--skip as given, or "every check". */
export function selectionWords(report: RunReport): string {
  const { only, skip } = report.selection;
  const parts = [only.length > 0 && `--only ${only.join(",")}`, skip.length > 0 && `--skip ${skip.join(",")}`].filter(
    Boolean,
  );
  return parts.length > 0 ? parts.join(" ") : "every check";
}

/** One sentence after the verdict: why it is what it is. */
export function verdictReason(report: RunReport): string {
  const gating = report.checks.filter((r) => r.gating).length;
  const notRun = report.unjudged.filter((u) => u.why === "selection").length;
  const needed = report.unjudged.filter((u) => u.why === "needs");
  const couldNot = report.unjudged.filter((u) => u.why === "skipped");
  switch (report.verdict) {
    case "not conformant":
      return `${gating} gating check(s) failed`;
    case "partial":
      if (report.checks.every((c) => c.status === "skip")) return "no check could judge anything";
      // Every gating check left unjudged is counted, those that could not judge for another reason (the server's own
      // answers, most often) too: a partial verdict that named only the flag it lacked hid them.
      return `no gating check failed, but ${[
        notRun > 0 && `${notRun} gating check(s) were not run (${selectionWords(report)})`,
        needed.length > 0 && `${needed.length} gating check(s) could not be judged without ${neededWords(needed)}`,
        couldNot.length > 0 &&
          `${couldNot.length} more gating check(s) could not judge (${couldNot.map((u) => u.id).join(", ")}: ` +
            `each says why)`,
      ]
        .filter(Boolean)
        .join(", and ")}`;
    case "conformant with waivers":
      return `no gating check failed, ${report.waivers.length} failure(s) waived by --expect-failures`;
    case "conformant":
      return "no gating check failed";
  }
}

/** The flags that would judge the checks left unjudged for want of them: "--replica (grpc.stateless.replicas)". */
export function neededWords(needed: readonly Pick<RunReport["unjudged"][number], "id" | "needs">[]): string {
  const byFlag = new Map<string, string[]>();
  for (const u of needed) byFlag.set(u.needs ?? "", [...(byFlag.get(u.needs ?? "") ?? []), u.id]);
  return [...byFlag].map(([flag, ids]) => `${flag} (${ids.join(", ")})`).join(", ");
}
