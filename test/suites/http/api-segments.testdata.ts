// Path segments of real public APIs, each with its source and whether rule 3 ("nouns, not verbs") lets it stand:
// "noun" for a name (a noun, or a noun that English also uses as a verb: replies, drafts, reports, updates,
// searches), "verb" for a name that only names an action, or that rule 3 names outright (the CRUD verbs, their
// synonyms, the HTTP methods). Segments whose reading the words alone cannot settle (a rerun, a void, a capture,
// a prune, a seek, a revoke, a purge: each also a noun) are left out rather than given an answer the lexicon would have to guess.

export type Expected = "noun" | "verb";
export interface ApiSegment {
  segment: string;
  expected: Expected;
  /** The public API and the path it comes from. */
  source: string;
}

const from = (source: string, expected: Expected, segments: string[]): ApiSegment[] => segments.map((segment) => ({ segment, expected, source }));

const GITHUB = "GitHub REST API (docs.github.com/rest)";
const STRIPE = "Stripe API (docs.stripe.com/api)";
const TWILIO = "Twilio REST API 2010-04-01 (www.twilio.com/docs/usage/api)";
const K8S = "Kubernetes API (kubernetes.io/docs/reference/kubernetes-api)";
const DOCKER = "Docker Engine API v1.43 (docs.docker.com/engine/api)";
const SPOTIFY = "Spotify Web API (developer.spotify.com/documentation/web-api)";
const GOOGLE = "Google APIs: Gmail v1, Drive v3, YouTube Data v3 (developers.google.com)";
const PAYPAL = "PayPal REST APIs: Orders v2, Subscriptions v1 (developer.paypal.com/api/rest)";
const OAUTH = "OAuth 2.0 endpoints: RFC 7009 revocation, RFC 7662 introspection, Auth0 Authentication API";
const SLACK = "Slack Web API method names (api.slack.com/methods)";
const MISC = "other public APIs, named per segment";

export const apiSegments: readonly ApiSegment[] = [
  ...from(GITHUB, "noun", [
    "repos", "issues", "pulls", "comments", "commits", "branches", "releases", "assets", "tags", "contents", "readme",
    "forks", "stargazers", "subscribers", "subscription", "collaborators", "contributors", "languages", "teams", "hooks",
    "deployments", "statuses", "check-runs", "check-suites", "actions", "workflows", "runs", "jobs", "artifacts",
    "secrets", "variables", "environments", "gists", "orgs", "members", "memberships", "invitations", "events",
    "notifications", "threads", "labels", "milestones", "assignees", "reactions", "reviews", "requested-reviewers",
    "followers", "following", "starred", "emails", "keys", "gpg-keys", "installations", "repositories", "blobs",
    "trees", "refs", "rate-limit", "licenses", "gitignore", "templates", "markdown", "meta", "traffic", "views",
    "clones", "popular", "paths", "referrers", "pages", "builds", "latest", "dispatches", "dismissals", "timeline",
    "codeowners", "errors", "vulnerability-alerts", "automated-security-fixes", "autolinks", "topics", "tarball",
    "zipball",
  ]),
  ...from(GITHUB, "verb", ["merge", "merges", "merge-upstream", "generate-notes", "approve"]),
  ...from(STRIPE, "noun", [
    "customers", "charges", "payment_intents", "refunds", "invoices", "subscriptions", "products", "prices", "coupons",
    "balance", "transactions", "payouts", "disputes", "sources", "tokens", "files", "accounts", "persons",
    "external_accounts", "transfers", "reversals", "topups", "checkout", "sessions", "line_items", "upcoming",
    "setup_intents", "payment_methods", "tax_rates", "shipping_rates", "promotion_codes", "quotes", "credit_notes",
    "preview", "webhook_endpoints", "radar", "issuing", "cards", "cardholders", "authorizations", "reporting",
    "report_runs", "report_types", "terminal", "readers", "locations", "connection_tokens", "balance_transactions",
  ]),
  ...from(STRIPE, "verb", ["confirm", "expire", "finalize", "attach", "detach", "verify", "accept", "reactivate", "search", "send", "retrieve"]),
  ...from(TWILIO, "noun", [
    "accounts", "messages", "calls", "recordings", "media", "conferences", "participants", "queues", "members",
    "feedback", "notifications", "transcriptions", "local", "mobile", "keys", "usage", "records", "triggers",
    "addresses", "applications", "sip", "domains", "credentials", "outgoing-caller-ids", "signing-keys",
  ]),
  ...from(K8S, "noun", [
    "namespaces", "pods", "services", "deployments", "replicasets", "configmaps", "secrets", "nodes", "log", "status",
    "scale", "binding", "eviction", "proxy", "events", "endpoints", "persistentvolumes", "ephemeralcontainers",
    "approval", "tokenreviews", "token", "leases", "cronjobs", "jobs", "ingresses", "roles", "rolebindings",
    "clusterroles",
  ]),
  ...from(K8S, "verb", ["finalize"]),
  ...from(DOCKER, "noun", [
    "containers", "images", "networks", "volumes", "top", "logs", "changes", "export", "stats", "archive", "history",
    "auth", "info", "version", "events", "system", "plugins", "swarm", "secrets", "configs", "tasks", "distribution",
    "session", "exec", "tag", "push", "build", "commit", "ping",
  ]),
  ...from(DOCKER, "verb", ["resize", "rename", "unlock", "enable", "disable", "create", "connect", "get"]),
  ...from(SPOTIFY, "noun", [
    "albums", "artists", "tracks", "playlists", "me", "player", "currently-playing", "queue", "devices", "next",
    "previous", "shuffle", "repeat", "volume", "play", "pause", "recommendations", "categories", "featured-playlists",
    "audio-features", "audio-analysis", "markets", "genres", "available-genre-seeds", "episodes", "shows", "chapters",
    "audiobooks", "followers",
  ]),
  ...from(SPOTIFY, "verb", ["contains"]),
  ...from(GOOGLE, "noun", [
    "users", "messages", "threads", "labels", "drafts", "history", "settings", "filters", "files", "permissions",
    "revisions", "comments", "replies", "changes", "about", "drives", "videos", "channels", "playlists", "captions",
    "thumbnails", "activities", "watermarks", "members",
  ]),
  ...from(GOOGLE, "verb", ["send", "search", "insert", "list", "delete", "update"]),
  ...from(PAYPAL, "noun", ["checkout", "orders", "payments", "captures", "refunds", "billing", "plans", "products", "webhooks"]),
  ...from(PAYPAL, "verb", ["authorize", "suspend", "activate", "deactivate"]),
  ...from(OAUTH, "noun", ["oauth", "token", "jwks"]),
  ...from(OAUTH, "verb", ["introspect", "authorize"]),
  ...from(SLACK, "noun", ["conversations", "history", "reactions", "pins", "stars", "emoji", "team", "info", "replies", "members", "test"]),
  ...from(SLACK, "verb", ["rename", "add", "remove"]),
  { segment: "incident_updates", expected: "noun", source: "Atlassian Statuspage API (/pages/{page_id}/incidents/{incident_id}/incident_updates)" },
  { segment: "saved_searches", expected: "noun", source: "Twitter API v1.1 (saved_searches/list)" },
  { segment: "reports", expected: "noun", source: "Google Admin SDK Reports API (admin/reports/v1/activity)" },
  { segment: "subscribe", expected: "verb", source: "WebSub hub subscription (W3C WebSub, hub.mode=subscribe as a path in self-hosted hubs such as /subscribe)" },
  { segment: "publish", expected: "verb", source: "Google Cloud Pub/Sub REST (projects.topics.publish: /v1/{topic}:publish)" },
  { segment: "acknowledge", expected: "verb", source: "Google Cloud Pub/Sub REST (projects.subscriptions.acknowledge)" },
  { segment: "translate", expected: "verb", source: "Google Cloud Translation v2 (/language/translate/v2)" },
  { segment: "detect", expected: "verb", source: "Google Cloud Translation v2 (/language/translate/v2/detect)" },
  { segment: "annotate", expected: "verb", source: "Google Cloud Vision (/v1/images:annotate)" },
  { segment: "summarize", expected: "verb", source: MISC + ": Microsoft Azure AI Language (/language/analyze-text/jobs... summarize tasks)" },
  { segment: "issues", expected: "noun", source: "Jira Cloud REST API v3 (/rest/api/3/issue... search results)" },
  { segment: "worklogs", expected: "noun", source: "Jira Cloud REST API v3 (/issue/{id}/worklog)" },
  { segment: "transitions", expected: "noun", source: "Jira Cloud REST API v3 (/issue/{id}/transitions)" },
  { segment: "watchers", expected: "noun", source: "Jira Cloud REST API v3 (/issue/{id}/watchers)" },
  { segment: "attachments", expected: "noun", source: "Jira Cloud REST API v3 (/issue/{id}/attachments)" },
  { segment: "zones", expected: "noun", source: "Cloudflare API v4 (/zones)" },
  { segment: "dns_records", expected: "noun", source: "Cloudflare API v4 (/zones/{zone_id}/dns_records)" },
  { segment: "droplets", expected: "noun", source: "DigitalOcean API v2 (/v2/droplets)" },
  { segment: "snapshots", expected: "noun", source: "DigitalOcean API v2 (/v2/snapshots)" },
  { segment: "floating_ips", expected: "noun", source: "DigitalOcean API v2 (/v2/floating_ips)" },
];
