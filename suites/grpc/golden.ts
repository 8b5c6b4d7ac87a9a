// The fixture checks: one check per golden case in fixtures/golden/grpc, grpc.golden.<file name>.
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { PACKAGE_ROOT } from "../../contract/paths.js";
import { fail, pass, type CheckDefinition, type Profile, type Severity } from "../../harness/check.js";
import { Status } from "../../harness/targets/grpc-target.js";
import { asReply, hello, show, target } from "./_internals/calls.js";
import { compareReplies } from "./_internals/variation.js";
import { describeRaw, rawStatus } from "./_internals/raw.js";

export const GOLDEN_DIR = join(PACKAGE_ROOT, "fixtures", "golden", "grpc");

export interface GoldenCase {
  name: string;
  description: string;
  severity: Severity;
  profile: Profile;
  spec: string;
  request: { hex: string; path?: string };
  expect: { outcome: "ok" } | { outcome: "status"; status: string } | { outcome: "same-as"; hex: string };
}

const bytes = (hexText: string) => new Uint8Array(Buffer.from(hexText.replace(/\s+/g, ""), "hex"));

export function loadGoldenCases(dir = GOLDEN_DIR): GoldenCase[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => ({ name: basename(f, ".json"), ...(JSON.parse(readFileSync(join(dir, f), "utf8")) as Omit<GoldenCase, "name">) }));
}

export function goldenCheck(c: GoldenCase): CheckDefinition {
  return {
    id: `grpc.golden.${c.name}`,
    title: c.description,
    severity: c.severity,
    area: "grpc",
    profile: c.profile,
    spec: c.spec,
    // Sent on the wire as gRPC frames.
    protocols: ["grpc"],
    async run(ctx) {
      const request = bytes(c.request.hex);
      const details = [`request bytes: ${c.request.hex || "(none)"}${c.request.path ? ` to ${c.request.path}` : ""}`];
      const expect = c.expect;
      if (expect.outcome === "status") {
        // On the wire, so that a status the client made up (a refused connection) never counts as the server's.
        const res = await target(ctx).raw({ ...(c.request.path && { path: c.request.path }), body: [{ compressed: false, data: request }] });
        const code = rawStatus(res);
        if (code === undefined) return fail(`no grpc-status from the server: ${describeRaw(res)}`, { details });
        const want = expect.status === "not-ok" ? undefined : Status[expect.status as keyof typeof Status];
        const ok = want === undefined ? code !== Status.OK : code === want;
        return ok ? pass(describeRaw(res)) : fail(`got ${describeRaw(res)}, expected ${expect.status}`, { details });
      }
      const result = await hello(ctx, request, c.request.path ? { path: c.request.path } : {});
      const reply = asReply(result);
      if (!reply.ok) return fail(reply.reason, { details });
      if (expect.outcome === "ok") return pass(`OK, reply ${show(reply.message.body)}`);
      const other = asReply(await hello(ctx, bytes(expect.hex)));
      if (!other.ok) return fail(`the comparison request (${expect.hex || "no bytes"}) was not served: ${other.reason}`);
      const same = await compareReplies(ctx, reply.message.body, other.message.body);
      if (same.verdict === "same") return pass(`same reply ${show(reply.message.body)}${same.note}`);
      if (same.verdict === "not-compared") return pass(`served; ${same.note}`);
      return fail(`got ${show(reply.message.body)}, but ${expect.hex || "no bytes"} got ${show(other.message.body)}`, { details });
    },
  };
}
