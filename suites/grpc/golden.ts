// The fixture checks: one check per golden case in fixtures/golden/grpc, with the ID the file gives or
// grpc.golden.<file name>. Each file is validated when it is loaded (_internals/golden-case.ts): a case that does not
// say exactly what it means (a misspelt status name, an unknown field) is a load error, never a check that passes on
// anything.
import { fail, pass, type CheckContext, type CheckDefinition, type CheckOutcome } from "../../harness/check.js";
import { droppedBeforeAnswer, Status, statusText, type UnaryResult } from "../../harness/protocols/rpc.js";
import { asReply, hello, show, target } from "./_internals/calls.js";
import { goldenId, onWire, replyOutcomes, statusOutcomes, type GoldenCase } from "./_internals/golden-case.js";
import { describeRaw, rawStatus } from "./_internals/raw.js";
import { compareReplies } from "./_internals/variation.js";
import { GRPC } from "../../harness/protocols/grpc/index.js";

export { GOLDEN_DIR, loadGoldenCases, validateGoldenCase, type GoldenCase } from "./_internals/golden-case.js";

const bytes = (hexText: string) => new Uint8Array(Buffer.from(hexText.replace(/\s+/g, ""), "hex"));

/** The body as given: frames length-prefixed here (a lying length kept as it lies), or one frame of the hex. */
function bodyOf(c: GoldenCase): Uint8Array {
  const frames = c.request.frames ?? [{ hex: c.request.hex ?? "" }];
  return Buffer.concat(
    frames.map((f) => {
      const payload = bytes(f.hex);
      const prefix = Buffer.alloc(5);
      prefix[0] = f.compressed ? 1 : 0;
      prefix.writeUInt32BE(f.length ?? payload.length, 1);
      return Buffer.concat([prefix, payload]);
    }),
  );
}

/** Whether the status came from the server, not from the client for want of an answer. */
const answered = (r: UnaryResult): boolean => r.code !== Status.DEADLINE_EXCEEDED && !droppedBeforeAnswer(r);

/** What a case judges with: the status names it allows and how its messages say what was wanted. */
interface Judge {
  c: GoldenCase;
  subject: string;
  want: string;
  matches: (code: number) => boolean;
  details: string[];
}

function judgeOf(c: GoldenCase): Judge {
  const names = statusOutcomes(c);
  const wants = names.map((n) =>
    n === "not-ok" ? "a status other than OK" : `${Status[n as keyof typeof Status]} ${n}`,
  );
  if (replyOutcomes(c).length > 0) wants.push("OK with one Message");
  const { hex, path, frames } = c.request;
  return {
    c,
    subject: c.subject ?? path ?? "the request",
    want: wants.join(" or "),
    matches: (code) =>
      names.some((n) => (n === "not-ok" ? code !== Status.OK : code === Status[n as keyof typeof Status])),
    details: [
      `request: ${hex !== undefined ? `bytes ${hex || "(none)"}` : `frames ${JSON.stringify(frames)}`}` +
        `${path ? ` to ${path}` : ""}`,
    ],
  };
}

/**
 * Over gRPC, read on the wire, so that a status the client made up (a refused connection) never counts as the server's.
 */
async function judgeOnWire(ctx: CheckContext, j: Judge): Promise<CheckOutcome> {
  const { c } = j;
  const res = await target(ctx).raw({
    ...(c.request.path && { path: c.request.path }),
    ...(c.request.headers && { headers: c.request.headers }),
    body: bodyOf(c),
  });
  const code = rawStatus(res);
  // A reply outcome on the wire (frames built by hand) asks for OK.
  const ok = code !== undefined && (j.matches(code) || (code === Status.OK && replyOutcomes(c).length > 0));
  return ok
    ? pass(describeRaw(res))
    : fail(`${j.subject} got ${describeRaw(res)}, not ${j.want}`, { details: j.details });
}

/** Through the target's client: the status it reports, and the reply judged as a Message when one is allowed. */
async function judgeByClient(ctx: CheckContext, j: Judge): Promise<CheckOutcome> {
  const { c } = j;
  const result = await hello(ctx, bytes(c.request.hex ?? ""), c.request.path ? { path: c.request.path } : {});
  const allowsReply = replyOutcomes(c)[0];
  if (statusOutcomes(c).length > 0 && (result.code !== Status.OK || !allowsReply)) {
    if (!answered(result)) return fail(`no answer: ${statusText(result.code, result.details)}`, { details: j.details });
    if (j.matches(result.code)) return pass(statusText(result.code, result.details));
    return fail(`${j.subject} got ${statusText(result.code, result.details)}, not ${j.want}`, { details: j.details });
  }
  // A case that allows no status allows a reply (the schema asks for one outcome at least).
  if (!allowsReply) throw new Error(`${goldenId(c)}: no outcome allowed`);
  const reply = asReply(result);
  if (!reply.ok) return fail(`${j.subject} was not served: ${reply.reason}`, { details: j.details });
  if (!("sameAs" in allowsReply)) return pass(`OK, reply body ${show(reply.message.body)}`);
  const other = asReply(await hello(ctx, bytes(allowsReply.sameAs)));
  if (!other.ok)
    return fail(`the comparison request (${allowsReply.sameAs || "no bytes"}) was not served: ${other.reason}`);
  const same = await compareReplies(ctx, reply.message.body, other.message.body);
  if (same.verdict === "same") return pass(`same reply ${show(reply.message.body)}${same.note}`);
  if (same.verdict === "not-compared") return pass(`served; ${same.note}`);
  return fail(
    `got ${show(reply.message.body)}, but ${allowsReply.sameAs || "no bytes"} got ${show(other.message.body)}`,
    { details: j.details },
  );
}

export function goldenCheck(c: GoldenCase): CheckDefinition {
  const j = judgeOf(c);
  const wire = onWire(c) || (c.statusFrom !== "client" && replyOutcomes(c).length === 0);
  return {
    id: goldenId(c),
    title: c.description,
    severity: c.severity,
    area: "grpc",
    profile: c.profile,
    spec: c.spec,
    // Frames and headers built by hand are gRPC's wire; a message alone goes over any protocol unless the case narrows
    // it.
    ...(c.protocols !== undefined ? { protocols: c.protocols } : onWire(c) && { protocols: [GRPC] as const }),
    run: (ctx) => (wire && target(ctx).protocol === GRPC ? judgeOnWire(ctx, j) : judgeByClient(ctx, j)),
  };
}
