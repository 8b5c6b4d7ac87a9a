// One request of an HTTP check and the reply it got: what probes record and the URI rules read.
import type { HttpRequest, HttpResponse, HttpTarget } from "../../../harness/targets/http-target.js";

export interface Exchange {
  req: HttpRequest;
  res: HttpResponse;
  /** The instance that answered, when not the run's target (a replica). */
  on?: HttpTarget;
}
