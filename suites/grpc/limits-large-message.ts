// grpc.limits.large-message: bodies up to the target's own receive limit are served, and its limit is one limit.
import { fail, pass, skip, type CheckDefinition } from "../../harness/check.js";
import { PROBE_BOUND, receiveLimit, sizeText } from "./_internals/receive-limit.js";

export const limitsLargeMessage: CheckDefinition = {
  id: "grpc.limits.large-message",
  title:
    `bodies from 1 KiB to ${sizeText(PROBE_BOUND)} are served up to the target's own receive limit, and never ` +
    `refused below a size it serves`,
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  // The specification shows no limit, so any limit is legal; what is not is refusing a body smaller than one served.
  spec: "§8 (limits not shown: the target's own limit is probed, none assumed)",
  async run(ctx) {
    const limit = await receiveLimit(ctx);
    const first = limit.firstRefused;
    if (first) {
      const later = limit.answers.find((a) => a.served && a.size > first.size);
      if (later) {
        return fail(
          `a ${sizeText(first.size)} body was not served (${first.reason}), yet a larger one of ` +
            `${sizeText(later.size)} was: that is no receive limit`,
        );
      }
      if (limit.largestServed === 0) return fail(`not even a ${sizeText(first.size)} body was served: ${first.reason}`);
    }
    // A size with no answer in time is neither served nor refused: what the target does with it was not seen.
    if (limit.unanswered.length > 0)
      return skip(`not judged for every size: ${limit.summary}; a longer --timeout may let them answer`);
    return pass(limit.summary);
  },
};
