// Golden cases for the static path rules of part 4.2: a path, which segments are ids, its kind, and each rule's
// verdict.
import type { PathShape } from "../../../suites/http/_internals/path-rules.js";

export type RuleName = "lowercase" | "nouns" | "plural" | "trailingSlash" | "underscore" | "extension" | "hierarchy";

export interface PathCase {
  why: string;
  shape: PathShape;
  /** Prefixes the collections are mounted under, as --collection names them. */
  mounts?: string[];
  /** The rules this path breaks; every other rule must pass it. */
  breaks: RuleName[];
}

const doc = (path: string, idSegments: number[] = []): PathShape => ({ path, idSegments, kind: "document" });
const coll = (path: string, idSegments: number[] = []): PathShape => ({ path, idSegments, kind: "collection" });
const unknown = (path: string, idSegments: number[] = []): PathShape => ({ path, idSegments, kind: "unknown" });

export const pathCases: PathCase[] = [
  { why: "the spec's collection", shape: coll("/messages"), breaks: [] },
  { why: "a document of it", shape: doc("/messages/3f0c9a", [1]), breaks: [] },
  { why: "rule 10's related resource", shape: doc("/messages/3f0c9a/reply", [1]), breaks: [] },
  { why: "a related collection with hyphens", shape: coll("/users/7/owned-items", [1]), breaks: [] },
  { why: "an id spelled in capitals is the server's to spell", shape: doc("/messages/AbC_9.x", [1]), breaks: [] },
  { why: "uncountable nouns are plural enough", shape: coll("/news"), breaks: [] },
  { why: "an unknown kind is not judged for number", shape: unknown("/status"), breaks: [] },
  { why: "uppercase name", shape: coll("/Messages"), breaks: ["lowercase"] },
  { why: "camelCase name", shape: doc("/messages/1/helloReply", [1]), breaks: ["lowercase"] },
  { why: "a CRUD verb as the related name", shape: unknown("/messages/1/show", [1]), breaks: ["nouns"] },
  { why: "a verb inside a hyphenated name", shape: coll("/create-messages"), breaks: ["nouns"] },
  { why: "an HTTP method name", shape: unknown("/messages/1/delete", [1]), breaks: ["nouns"] },
  {
    why: "a verb that is also a document name is still a verb",
    shape: doc("/messages/1/update", [1]),
    breaks: ["nouns"],
  },
  {
    why: "'options' is allowed by default: a noun in most interfaces",
    shape: coll("/products/1/options", [1]),
    breaks: [],
  },
  { why: "a singular collection before an id", shape: doc("/message/1", [1]), breaks: ["plural"] },
  { why: "a singular name for a collection representation", shape: coll("/message"), breaks: ["plural"] },
  { why: "a plural name for one document", shape: doc("/messages/1/replies", [1]), breaks: ["plural"] },
  { why: "a trailing slash", shape: coll("/messages/"), breaks: ["trailingSlash"] },
  { why: "an underscore", shape: doc("/messages/1/hello_reply", [1]), breaks: ["underscore"] },
  { why: "a .json extension", shape: coll("/messages.json"), breaks: ["extension"] },
  { why: "an .xml extension on a related name", shape: doc("/messages/1/reply.xml", [1]), breaks: ["extension"] },
  { why: "two names with no id between", shape: doc("/messages/latest"), breaks: ["hierarchy"] },
  { why: "two ids in a row", shape: doc("/messages/1/2", [1, 2]), breaks: ["hierarchy"] },
  { why: "a path that opens with an id", shape: coll("/1/messages", [0]), breaks: ["hierarchy"] },
  { why: "an empty level", shape: coll("/messages//replies"), breaks: ["hierarchy"] },
  { why: "a URI template's variable is an id", shape: doc("/messages/{id}/reply", [1]), breaks: [] },
  // Versioning and mounting are not shown (part 9): the levels before a named collection are not a hierarchy.
  { why: "a version prefix before a named collection", shape: coll("/v1/messages"), mounts: ["/v1"], breaks: [] },
  { why: "a mount prefix, and an item under it", shape: doc("/api/messages/12", [2]), mounts: ["/api"], breaks: [] },
  {
    why: "without the collection named there, a prefix is two names in a row",
    shape: coll("/v1/messages"),
    breaks: ["hierarchy"],
  },
  {
    why: "ids in any spelling: a ULID in capitals",
    shape: doc("/v1/messages/01HF3ZQ8V6X0TB2M3N4P5Q6R7S", [2]),
    mounts: ["/v1"],
    breaks: [],
  },
  { why: "ids in any spelling: nanoid with _ and -", shape: doc("/messages/V1StGXR8_Z5jdHi6B-myT", [1]), breaks: [] },
  // An action in the path is rule 3's alone: not also a singular collection or a missing level.
  { why: "a search action under a collection", shape: coll("/messages/search"), breaks: ["nouns"] },
  { why: "a delete action under a message", shape: doc("/messages/1/delete", [1]), breaks: ["nouns"] },
  {
    why: "several rules at once",
    shape: coll("/Get_Messages.json/"),
    breaks: ["lowercase", "nouns", "trailingSlash", "underscore", "extension"],
  },
];

/** Verb-list options: a configured list replaces the default, and the allow-list lets a word through. */
export const wordCases: { why: string; path: string; verbs?: string[]; allow?: string[]; breaks: boolean }[] = [
  { why: "default list", path: "/messages/1/show", breaks: true },
  { why: "allow-listed", path: "/messages/1/show", allow: ["show"], breaks: false },
  { why: "a configured list replaces the default", path: "/messages/1/show", verbs: ["archive"], breaks: false },
  { why: "a configured verb", path: "/messages/1/archive", verbs: ["archive"], breaks: true },
  { why: "words match whole: 'posts' is not 'post'", path: "/posts", breaks: false },
  { why: "words match whole: 'updates' is not 'update'", path: "/updates", breaks: false },
];
