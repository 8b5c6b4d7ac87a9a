// Before any HTTP check runs: a target that wants a key the run was not given, or refuses the one given where it
// was sent, cannot be checked (exit 5, naming the placement that works when a probe can tell), never "not conformant".
import { ConformanceError } from "../errors.js";
import {
  describePlacement,
  placementFlag,
  type ApiKeyPlacement,
  type HttpRequest,
  type HttpResponse,
  type HttpTarget,
} from "./http-target.js";

const JSON_TYPE = "application/json";

/**
 * Placements a refused key is tried in, in order: the specification shows none (part 5), so these are only the
 * common ones, and a target that takes its key elsewhere is told "check the key, and where it goes".
 */
export const PLACEMENTS_TRIED: readonly ApiKeyPlacement[] = [
  { in: "header", name: "X-API-Key" },
  { in: "header", name: "Authorization", scheme: "Bearer" },
  { in: "header", name: "Authorization" },
  { in: "query", name: "api_key" },
  { in: "query", name: "apikey" },
  { in: "query", name: "key" },
];

export interface HttpCredentialsOptions {
  /** The collection whose read and create show whether a key is wanted. */
  collection: string;
  /** Whether the run was given a key. */
  keyGiven: boolean;
  /** Where the run sends the key. */
  placement: ApiKeyPlacement;
  /** The same target with the run's key in another place (the same budget), to find where a refused key goes. */
  withPlacement(placement: ApiKeyPlacement): HttpTarget;
}

const refused = (res: HttpResponse): boolean => res.status === 401 || res.status === 403;
const unauthenticated = (res: HttpResponse): boolean => res.status === 401;

/**
 * The exchange in one line: the method, the path, the status (the target's reason phrase left out: it is its words).
 */
const shown = (req: HttpRequest, res: HttpResponse): string => `${req.method} ${req.path} → ${res.status}`;

const samePlacement = (a: ApiKeyPlacement, b: ApiKeyPlacement): boolean =>
  a.in === b.in &&
  a.name.toLowerCase() === b.name.toLowerCase() &&
  (a.in === "query" || a.scheme === (b as { scheme?: string }).scheme);

/** An id no target has given out: a replace or delete of it changes nothing wherever it is answered. */
const NO_SUCH_ID = "example-conformance-credentials-probe";

/**
 * Reads the collection and asks to create in it with a body no server can store (malformed JSON: a target that
 * wants no key refuses it with a 400 and creates nothing), since reading may be open where writing needs the key;
 * and asks to replace and delete a message that does not exist, since creating may be open where changing needs
 * it: all four side by side. Those two count only a 401 (authentication wanted): a 403 there may be the target's
 * legal refusal of a replace that would create. Throws a credentials error for the first refusal in that order;
 * returns when there is none.
 */
export async function probeHttpCredentials(target: HttpTarget, options: HttpCredentialsOptions): Promise<void> {
  const item = `${options.collection.replace(/\/$/, "")}/${NO_SUCH_ID}`;
  const asks: [HttpRequest, (res: HttpResponse) => boolean][] = [
    [{ method: "GET", path: options.collection, headers: { accept: JSON_TYPE } }, refused],
    [
      {
        method: "POST",
        path: options.collection,
        headers: { accept: JSON_TYPE, "content-type": JSON_TYPE },
        body: '{"body": ',
      },
      refused,
    ],
    [
      { method: "PUT", path: item, headers: { accept: JSON_TYPE, "content-type": JSON_TYPE }, body: '{"body": ' },
      unauthenticated,
    ],
    [{ method: "DELETE", path: item, headers: { accept: JSON_TYPE } }, unauthenticated],
  ];
  // Side by side, one round trip for all: none stores anything (the bodies are malformed, the id is no one's), so
  // none changes another's answer; the refusal told is the first in this order, whichever answered first.
  const answers = await Promise.allSettled(asks.map(([req]) => target.request(req)));
  for (const [i, [req, isRefusal]] of asks.entries()) {
    const answer = answers[i] as PromiseSettledResult<HttpResponse>;
    if (answer.status === "rejected") throw answer.reason;
    const res = answer.value;
    if (!isRefusal(res)) continue;
    if (!options.keyGiven)
      throw new ConformanceError(
        "credentials",
        `cannot check: the target wants credentials (${shown(req, res)}): pass --api-key K or ` +
          `EXAMPLE_API_KEY${placementHint(res)}`,
      );
    throw new ConformanceError("credentials", await refusedKey(req, res, options));
  }
}

/** What WWW-Authenticate says of where the key goes, when it names the Bearer scheme. */
function placementHint(res: HttpResponse): string {
  const challenge = res.headers["www-authenticate"]?.join(",") ?? "";
  return /^\s*bearer\b/i.test(challenge)
    ? ", with --api-key-in bearer (its WWW-Authenticate asks for Bearer)"
    : ", with --api-key-in header:NAME, bearer or query:NAME when it does not go in X-API-Key";
}

/** Why the given key was refused: sent in the wrong place (and which works), or not the key. */
async function refusedKey(req: HttpRequest, res: HttpResponse, options: HttpCredentialsOptions): Promise<string> {
  const where = describePlacement(options.placement);
  const others = PLACEMENTS_TRIED.filter((p) => !samePlacement(p, options.placement));
  for (const placement of others) {
    const elsewhere = options.withPlacement(placement);
    try {
      const answer = await elsewhere.request(req);
      if (answer.status !== 0 && !refused(answer)) {
        return (
          `cannot check: the target refuses the key sent in ${where} (${shown(req, res)}) and accepts it in ` +
          `${describePlacement(placement)} (${shown(req, answer)}): pass --api-key-in ${placementFlag(placement)}`
        );
      }
    } finally {
      await elsewhere.close();
    }
  }
  const tried = others.map(placementFlag).join(", ");
  return (
    `cannot check: the target refuses the key sent in ${where} (${shown(req, res)}), and in every other placement ` +
    `tried (${tried}): check the key, and where it goes (--api-key-in header:NAME, bearer or query:NAME)`
  );
}
