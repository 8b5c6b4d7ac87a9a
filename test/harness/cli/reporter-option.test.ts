// --reporter NAME[=FILE] and its aliases, parsed and chosen without running anything.
import { describe, expect, it } from "vitest";
import { chooseReporters, parseReporter } from "../../../harness/cli/reporter-option.js";

const names = (chosen: readonly { name: string; path?: string }[]) =>
  chosen.map((r) => (r.path !== undefined ? `${r.name}=${r.path}` : r.name));

describe("--reporter", () => {
  it("names a reporter, with a file for the ones that write a document", () => {
    expect(parseReporter("json=out/r.json")).toEqual({ name: "json", path: "out/r.json", flag: "--reporter json=" });
    expect(parseReporter("junit=a=b.xml")).toMatchObject({ name: "junit", path: "a=b.xml" });
    expect(parseReporter("github")).toEqual({ name: "github", flag: "--reporter" });
  });

  it.each([
    ["jsno=out.json", /^unknown reporter "jsno"; known: console, github, json, junit, html$/],
    ["Console", /unknown reporter "Console"/],
    ["", /unknown reporter ""/],
    ["console=out.txt", /^console writes to the terminal and takes no file$/],
    ["json=", /^json=: the file name is empty$/],
  ])("refuses %j", (value, message) => {
    expect(() => parseReporter(value)).toThrow(message);
  });

  it("keeps the console (and GitHub annotations under Actions) when every reporter named writes a file", () => {
    expect(names(chooseReporters([parseReporter("json=a.json")], { reportJunit: "b.xml" }, {}))).toEqual([
      "console",
      "json=a.json",
      "junit=b.xml",
    ]);
    expect(names(chooseReporters([], {}, { GITHUB_ACTIONS: "true" }))).toEqual(["console", "github"]);
  });

  it("gives stdout to exactly the reporters named without a file", () => {
    expect(names(chooseReporters([parseReporter("github")], {}, { GITHUB_ACTIONS: "true" }))).toEqual(["github"]);
    expect(names(chooseReporters([parseReporter("json")], { reportHtml: "r.html" }, {}))).toEqual([
      "json",
      "html=r.html",
    ]);
  });

  it("treats an alias and --reporter naming the same file as one reporter", () => {
    expect(
      names(chooseReporters([parseReporter("json=a.json"), parseReporter("console")], { reportJson: "a.json" }, {})),
    ).toEqual(["json=a.json", "console"]);
  });

  it("refuses a document on stdout beside anything else there", () => {
    expect(() => chooseReporters([parseReporter("json"), parseReporter("console")], {}, {})).toThrow(
      /--reporter json without a file writes its report to stdout.*leave out console$/,
    );
    expect(() => chooseReporters([parseReporter("junit"), parseReporter("html")], {}, {})).toThrow(
      /--reporter junit without a file/,
    );
  });
});
