// The HTTP checks' settings are the session's, defaults filled in once per run: a check reads them, never refills them.
import { describe, expect, it } from "vitest";
import { configOf } from "../../../suites/http/_internals/config.js";
import { Probe } from "../../../suites/http/_internals/probe.js";
import { httpContext } from "../../helpers/http-context.js";

describe("the HTTP checks' settings", () => {
  it("are the run's own object, the same for every check of the run", () => {
    const ctx = httpContext("http://127.0.0.1:9", { collections: ["/notes"] });
    expect(configOf(ctx)).toBe(ctx.httpConfig);
    expect(new Probe(ctx).config).toBe(ctx.httpConfig);
    expect(new Probe(ctx).collections).toEqual(["/notes"]);
  });

  it("come from nowhere else: an HTTP target without them is an error, not silent defaults", () => {
    const { httpConfig: _, ...ctx } = httpContext("http://127.0.0.1:9");
    expect(() => configOf(ctx)).toThrow(/without the run's settings/);
  });
});
