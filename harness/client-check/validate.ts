// Whether a recorded request is valid for its protocol and valid proto3: what a legal server may refuse a request
// for. Each problem is one line; an empty list is a valid request. A protocol's calls are judged by its module
// (harness/protocols/<name>/recording.ts); the resource requests here.
import { protocolModule } from "../protocols/index.js";
import { HELLO_PATH } from "./recording-servers.js";
import { headerValue, MAX_RECORDED_BODY_BYTES, RESOURCES, type RecordedRequest } from "./recorded-request.js";

const RPC_CONTENT_TYPES = /^application\/(grpc|grpc-web|grpc-web-text|proto|json|connect\+\w+)\b/;

/**
 * A resource request: a GET or HEAD carries no payload (part 4.2 rule 11); one the reference server refused as
 * malformed.
 */
function resourceProblems(r: RecordedRequest): string[] {
  const problems: string[] = [];
  if ((r.method === "GET" || r.method === "HEAD") && r.body.length > 0)
    problems.push(`a ${r.method} request carries no payload (part 4.2 rule 11); it carries ${r.body.length} bytes`);
  const contentType = headerValue(r, "content-type") ?? "";
  if (r.method === "POST" && RPC_CONTENT_TYPES.test(contentType) && r.answer === "404")
    problems.push(`an RPC to a path no procedure is at (the contract's Hello is ${HELLO_PATH})`);
  else if (["400", "405", "411", "415", "422"].includes(r.answer))
    problems.push(
      `a legal server (the reference's HTTP interface) refused it as wrong: HTTP ${r.answer} (part 7: 4xx, the ` +
        `client's request was wrong)`,
    );
  return problems;
}

/** Every problem of a recorded request: a resource request's here, a protocol's call's as its module judges it. */
export async function requestProblems(r: RecordedRequest): Promise<string[]> {
  if (r.truncated)
    return [`its body is longer than the recording bound (${MAX_RECORDED_BODY_BYTES} bytes) for a one-field Message`];
  if (r.protocol === RESOURCES) return resourceProblems(r);
  const side = protocolModule(r.protocol)?.recording;
  return side ? side.problems(r, MAX_RECORDED_BODY_BYTES) : [`no protocol named ${r.protocol} judges its calls`];
}
