// http.auth.api-key: with --api-key, a data request without the key or with a wrong one gets 401; with it, a 2xx.
import { httpCheck, JSON_TYPE, messageJson, statusLine, uniqueBody } from "./_internals/probe.js";

export const authApiKey = httpCheck(
  {
    id: "http.auth.api-key",
    title: "a data request without the API key, or with a wrong one, gets 401; with the key it succeeds",
    severity: "MUST",
    spec: "§5 (a client holding the key sends it with each data request)",
  },
  async (p) => {
    const key = p.config.apiKey;
    // The spec shows neither the key's placement nor its format: only the user knows them.
    if (key === undefined) p.skip("no API key given (--api-key K [--api-key-header NAME])");
    const header = p.config.apiKeyHeader;
    const shown: string[] = [];
    for (const c of p.collections) {
      const without = await p.get(c, { accept: JSON_TYPE }, { withoutApiKey: true });
      if (without.res.status !== 401) p.problem(`GET ${c} without the key answered ${statusLine(without.res)}, not 401`, without);
      const wrong = await p.get(c, { accept: JSON_TYPE, [header]: `${key}-wrong` }, { withoutApiKey: true });
      if (wrong.res.status !== 401) p.problem(`GET ${c} with a wrong key in ${header} answered ${statusLine(wrong.res)}, not 401`, wrong);
      const post = await p.sendBody("POST", c, messageJson(uniqueBody("no-key")), JSON_TYPE, { withoutApiKey: true });
      p.track(c, post);
      if (post.res.status !== 401) p.problem(`POST ${c} without the key answered ${statusLine(post.res)}, not 401`, post);
      const withKey = await p.get(c);
      if (withKey.res.status < 200 || withKey.res.status >= 300) p.problem(`GET ${c} with the key in ${header} answered ${statusLine(withKey.res)}, not a 2xx`, withKey);
      else shown.push(`GET and POST ${c} without the key → 401, a wrong key → 401, the key in ${header} → ${withKey.res.status}`);
    }
    return shown.join("; ");
  },
);
