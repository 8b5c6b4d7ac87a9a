// The reply bounds moved to the wire layer (harness/wire/bounds.ts); this name stays for protocols/grpc/raw-h2.ts, which
// imports it until it joins the wire layer (issue 39), and is to be removed then.
export { MAX_REPLY_BYTES } from "../wire/bounds.js";
