// The buf check plugin as a pure function of its arguments and standard input, speaking pluginrpc protocol 1.
import {
  PluginCode,
  TYPE_URL_PREFIX,
  decodeCheckRequest,
  decodeRequest,
  encodeCheckResponse,
  encodeListCategoriesResponse,
  encodeListRulesResponse,
  encodeResponse,
  encodeSpec,
} from "./wire.js";
import { lintRules, type LintRule } from "./rules.js";

const SERVICE = "/buf.plugin.check.v1.CheckService/";
const CHECK = `${SERVICE}Check`;
const LIST_RULES = `${SERVICE}ListRules`;
const LIST_CATEGORIES = `${SERVICE}ListCategories`;

export interface PluginRun {
  stdout: Uint8Array;
  stderr: string;
  exitCode: number;
}

const ok = (stdout: Uint8Array): PluginRun => ({ stdout, stderr: "", exitCode: 0 });
const usage = (message: string): PluginRun => ({ stdout: new Uint8Array(), stderr: `${message}\n`, exitCode: 2 });

/** Runs one plugin invocation: `--protocol`, `--spec`, or a procedure path with a request on stdin. */
export async function runPlugin(
  args: readonly string[],
  stdin: Uint8Array,
  rules: readonly LintRule[] = lintRules,
): Promise<PluginRun> {
  const rest: string[] = [];
  let protocol = false;
  let spec = false;
  let format = "binary";
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--protocol") protocol = true;
    else if (arg === "--spec") spec = true;
    else if (arg === "--format") format = args[++i] ?? "";
    else if (arg.startsWith("--format=")) format = arg.slice("--format=".length);
    else if (arg === "-h" || arg === "--help")
      return ok(new TextEncoder().encode(`Commands:\n  ${CHECK}\n  ${LIST_RULES}\n  ${LIST_CATEGORIES}\n`));
    else rest.push(arg);
  }
  if (format !== "binary")
    return usage(`buf-plugin-example: --format ${JSON.stringify(format)} is not supported; only "binary" is`);
  if (protocol) return ok(new TextEncoder().encode("1\n"));
  if (spec) return ok(encodeSpec([CHECK, LIST_RULES, LIST_CATEGORIES]));
  if (rest.length !== 1) return usage(`buf-plugin-example: expected one procedure path, got ${JSON.stringify(rest)}`);
  const path = rest[0] as string;

  let request;
  try {
    request = decodeRequest(stdin);
  } catch (err) {
    return fail(PluginCode.INVALID_ARGUMENT, `malformed pluginrpc request: ${String(err)}`);
  }
  const respond = (typeName: string, value: Uint8Array) =>
    ok(encodeResponse({ value: { typeUrl: TYPE_URL_PREFIX + typeName, value } }));

  switch (path) {
    case LIST_RULES:
      return respond("buf.plugin.check.v1.ListRulesResponse", encodeListRulesResponse(rules));
    case LIST_CATEGORIES:
      return respond("buf.plugin.check.v1.ListCategoriesResponse", encodeListCategoriesResponse());
    case CHECK: {
      let check;
      try {
        check = await decodeCheckRequest(request?.value ?? new Uint8Array());
      } catch (err) {
        return fail(PluginCode.INVALID_ARGUMENT, `malformed CheckRequest: ${String(err)}`);
      }
      const wanted = check.ruleIds.length > 0 ? new Set(check.ruleIds) : undefined;
      const active = rules.filter((r) => (wanted ? wanted.has(r.id) : r.isDefault));
      const annotations = active.flatMap((r) => r.check(check.files));
      return respond("buf.plugin.check.v1.CheckResponse", encodeCheckResponse(annotations));
    }
    default:
      return fail(PluginCode.UNIMPLEMENTED, `unknown procedure ${path}`);
  }
}

function fail(code: number, message: string): PluginRun {
  // pluginrpc reports a failed call in the response's error field, with exit code 0.
  return ok(encodeResponse({ error: { code, message } }));
}
