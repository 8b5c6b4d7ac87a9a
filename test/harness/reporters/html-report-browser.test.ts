// The HTML report of a failing run, rendered in a real browser (Debian's chromium, driven by playwright-core through
// its path; nothing downloads a browser): at 1280 px the first gating failure is on the first screen, at 400 px
// nothing scrolls sideways and no word that fits its line is broken, and printed to PDF the first page names every
// gating failure (read back with pdftotext, from Debian's poppler-utils); and the attestation the run signed, with
// its key's fingerprint, what it binds and how to verify it, drawn on screen.
import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { brokenHttpServers } from "../../../fixtures/broken-servers/http/index.js";
import { HEADER_PAYLOAD, HUGE_PAYLOAD, PAYLOAD } from "../../../fixtures/hostile-targets/payloads.js";
import type { CheckResult, RunReport } from "../../../harness/report.js";
import { toHtml } from "../../../harness/reporters/html.js";
import { cli } from "../../helpers/cli.js";
import { skipIfMissing } from "../../helpers/toolchain.js";

const run = promisify(execFile);
const CHROMIUM = process.env.EXAMPLE_CHROMIUM ?? "/usr/bin/chromium";
/** docs/reporters.md's screenshot is this test's 1280 px view, written when this is set. */
const SCREENSHOT =
  process.env.EXAMPLE_UPDATE_SCREENSHOT === "1"
    ? join(import.meta.dirname, "../../../docs/images/report.png")
    : undefined;

const browserTools = {
  name: "the HTML report in a browser",
  async missing(): Promise<string | undefined> {
    if (!existsSync(CHROMIUM)) return `no browser at ${CHROMIUM} (Debian's chromium)`;
    return run("pdftotext", ["-v"]).then(
      () => undefined,
      () => "no pdftotext (Debian's poppler-utils)",
    );
  },
};

const dir = mkdtempSync(join(tmpdir(), "html-browser-"));
const files = {
  html: join(dir, "report.html"),
  json: join(dir, "report.json"),
  pdf: join(dir, "report.pdf"),
  attestation: join(dir, "run.intoto.json"),
  key: join(dir, "key.pem"),
};
let browser: Browser | undefined;
let page: Page;
let gating: string[] = [];
let reasons: string[] = [];
let failing: RunReport;

beforeAll(async () => {
  // One server answering a creating POST with 200: two gating failures after 40-odd skips of the RPC checks.
  const server = await (
    brokenHttpServers.find((s) => s.name === "create-200") as (typeof brokenHttpServers)[number]
  ).start();
  // Signed, as a certifier's run is: the page then shows the attestation below the run's particulars.
  writeFileSync(files.key, generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }));
  try {
    const done = await cli([
      "check",
      "--http",
      server.url,
      "--seed",
      "1",
      "--report-html",
      files.html,
      "--report-json",
      files.json,
      "--attestation",
      files.attestation,
      "--sign-key",
      files.key,
    ]);
    expect(done.code, done.stderr).toBe(1);
  } finally {
    await server.close();
  }
  const report = JSON.parse(readFileSync(files.json, "utf8")) as RunReport;
  failing = report;
  gating = report.checks.filter((c) => c.gating).map((c) => c.id);
  reasons = report.checks.filter((c) => c.gating).map((c) => c.message);
  expect(report.checks.filter((c) => c.status === "skip").length).toBeGreaterThan(40);
  if ((await browserTools.missing()) !== undefined) return;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(pathToFileURL(files.html).href);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Where the first gating failure's ID is drawn, in page pixels. */
async function firstFailureBox(): Promise<{ top: number; bottom: number }> {
  const box = await page
    .getByText(gating[0] as string, { exact: true })
    .filter({ visible: true })
    .first()
    .boundingBox();
  expect(box, `${gating[0]} is drawn`).not.toBeNull();
  const scrollY = (await page.evaluate("window.scrollY")) as number;
  return { top: (box?.y ?? 0) + scrollY, bottom: (box?.y ?? 0) + (box?.height ?? 0) + scrollY };
}

/**
 * Every word drawn across two lines though it would fit on one: for each whitespace-separated word in a text node,
 * its range's boxes; more than one line of them, with the word no wider than its block, is a broken word.
 */
async function brokenWords(): Promise<string[]> {
  // Runs in the page, so it is given as source: this project's compiler has no DOM types.
  return (await page.evaluate(`(() => {
    const broken = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      if (!node.parentElement.checkVisibility()) continue;
      let block = node.parentElement;
      while (block && getComputedStyle(block).display.startsWith("inline")) block = block.parentElement;
      const room = block ? block.clientWidth : Infinity;
      for (const m of node.textContent.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const rects = [...range.getClientRects()].filter((r) => r.width > 0);
        const lines = new Set(rects.map((r) => Math.round(r.top)));
        const width = rects.reduce((sum, r) => sum + r.width, 0);
        if (lines.size > 1 && width <= room) broken.push(m[0]);
      }
    }
    return broken;
  })()`)) as string[];
}

describe("the HTML report of a failing run, in headless Chromium", () => {
  it("at 1280 px the first gating failure lies within the first screen", async (ctx) => {
    await skipIfMissing(browserTools, ctx.skip);
    await page.setViewportSize({ width: 1280, height: 800 });
    const box = await firstFailureBox();
    expect(box.bottom, `${gating[0]} at ${Math.round(box.top)} px`).toBeLessThanOrEqual(800);
    if (SCREENSHOT) writeFileSync(SCREENSHOT, await page.screenshot());
  });

  it(
    "at 400 px nothing scrolls sideways, no word is broken inside, and the first failure is still on the first " +
      "screen",
    async (ctx) => {
      await skipIfMissing(browserTools, ctx.skip);
      await page.setViewportSize({ width: 400, height: 800 });
      const { scrollWidth, clientWidth } = (await page.evaluate(
        "({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth })",
      )) as { scrollWidth: number; clientWidth: number };
      expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
      expect(await brokenWords()).toEqual([]);
      const box = await firstFailureBox();
      expect(box.bottom, `${gating[0]} at ${Math.round(box.top)} px`).toBeLessThanOrEqual(800);
    },
  );

  it("printed, the first page names every gating failure with its reason, and no word is broken", async (ctx) => {
    await skipIfMissing(browserTools, ctx.skip);
    writeFileSync(files.pdf, await page.pdf({ format: "A4", preferCSSPageSize: true }));
    const { stdout: first } = await run("pdftotext", ["-f", "1", "-l", "1", files.pdf, "-"]);
    // pdftotext keeps a line's words apart by one space or a line end: compare with whitespace collapsed.
    const flat = first.replace(/\s+/g, " ");
    for (const id of gating) expect(flat, `${id} on page 1`).toContain(id);
    for (const reason of reasons) expect(flat).toContain(reason.replace(/\s+/g, " "));
    // The print layout, laid out at an A4 page's width less its margins (186 mm at 96 px to the inch).
    await page.emulateMedia({ media: "print" });
    await page.setViewportSize({ width: Math.floor((186 / 25.4) * 96), height: 1000 });
    try {
      expect(await brokenWords()).toEqual([]);
    } finally {
      await page.emulateMedia({ media: "screen" });
    }
  });

  /**
   * The attestation section's text as drawn, once scrolled to at 1280 px: it must be on screen, not only in the source.
   */
  async function attestationOnScreen(): Promise<string> {
    await page.emulateMedia({ media: "screen" });
    await page.setViewportSize({ width: 1280, height: 800 });
    const section = page.locator("#attestation");
    await section.scrollIntoViewIfNeeded({ timeout: 5_000 });
    expect(await section.isVisible()).toBe(true);
    const box = await section.boundingBox();
    expect(box?.height ?? 0).toBeGreaterThan(0);
    expect(box?.y ?? 800, "the section's top within the window").toBeLessThan(800);
    // biome-ignore lint/performance/useDomNodeTextContent: the text as rendered (innerText), which the page shows a reader
    return (await section.innerText()).replace(/\s+/g, " ");
  }

  it(
    "with an attestation: on screen, the key's fingerprint, exactly what the statement binds, and the command that " +
      "verifies it",
    async (ctx) => {
      await skipIfMissing(browserTools, ctx.skip);
      await page.goto(pathToFileURL(files.html).href);
      const envelope = JSON.parse(readFileSync(files.attestation, "utf8")) as {
        payload: string;
        signatures: { keyid: string }[];
      };
      const statement = JSON.parse(Buffer.from(envelope.payload, "base64").toString("utf8")) as {
        subject: { name: string; digest: { sha256: string }; annotations: Record<string, string> }[];
      };
      const subject = statement.subject[0];
      const text = await attestationOnScreen();
      expect(text).toContain(envelope.signatures[0]?.keyid);
      expect(text).toContain(subject?.name);
      expect(text).toContain(`sha256:${subject?.digest.sha256}`);
      expect(text).toContain(subject?.annotations.boundBy);
      expect(text).toContain(subject?.annotations.http);
      expect(text).toContain(`example-conformance verify ${files.attestation} --key`);
      expect(text).toMatch(/openssl pkey -in \S+ -pubout/);
    },
  );

  it(
    "an attestation bound by an image's digest names it, the image and the TLS certificate's fingerprint; without " +
      "one, no section",
    async (ctx) => {
      await skipIfMissing(browserTools, ctx.skip);
      const bound: RunReport = {
        ...failing,
        target: {
          ...failing.target,
          image: "registry.example/svc:1.4",
          imageDigest: `sha256:${"ab".repeat(32)}`,
          tlsFingerprint: Array(32).fill("C3").join(":"),
        },
      };
      const page3 = join(dir, "bound.html");
      writeFileSync(page3, toHtml(bound, { pageDir: dir }));
      await page.goto(pathToFileURL(page3).href);
      const text = await attestationOnScreen();
      expect(text).toContain(`sha256:${"ab".repeat(32)}`);
      expect(text).toMatch(/bound by image digest/i);
      expect(text).toContain("registry.example/svc:1.4");
      expect(text).toContain(Array(32).fill("C3").join(":"));
      const { attestation: _, ...unsigned } = failing;
      expect(toHtml(unsigned)).not.toContain('id="attestation"');
    },
  );

  it(
    "a hostile target's text, long and full of markup, at 400 px: nothing scrolls sideways, no element but the " +
      "page's own",
    async (ctx) => {
      await skipIfMissing(browserTools, ctx.skip);
      const hostile = (r: CheckResult): CheckResult =>
        r.gating
          ? {
              ...r,
              message: `${"q".repeat(900)} ${HUGE_PAYLOAD}`,
              details: [PAYLOAD, HEADER_PAYLOAD, "x".repeat(3000)],
              counterexample: "y".repeat(3000),
              trace: join(dir, "traces", `${"z".repeat(500)}"><script>.har`),
            }
          : r;
      const page2 = join(dir, "hostile.html");
      // The attestation's section too: the subject's names and its file, hostile as the rest.
      const attestation = { file: `${"a".repeat(300)}"><img src=x onerror=alert(1)>.json`, keyId: "0".repeat(64) };
      writeFileSync(
        page2,
        toHtml(
          {
            ...failing,
            checks: failing.checks.map(hostile),
            containerLog: [PAYLOAD, HUGE_PAYLOAD],
            implementation: { name: PAYLOAD, version: HEADER_PAYLOAD },
            attestation,
          },
          { pageDir: dir },
        ),
      );
      await page.emulateMedia({ media: "screen" });
      await page.setViewportSize({ width: 400, height: 800 });
      await page.goto(pathToFileURL(page2).href);
      const seen = (await page.evaluate(`({
      scrollWidth: document.documentElement.scrollWidth,
      clientWidth: document.documentElement.clientWidth,
      foreign: document.querySelectorAll("script, img, iframe, object, embed, form, [onerror], [onclick]").length,
      links: [...document.querySelectorAll("a")].map((a) => a.getAttribute("href")),
    })`)) as { scrollWidth: number; clientWidth: number; foreign: number; links: string[] };
      expect(seen.scrollWidth).toBeLessThanOrEqual(seen.clientWidth);
      expect(seen.foreign).toBe(0);
      expect(seen.links).toEqual([
        `traces/${"z".repeat(500)}%22%3E%3Cscript%3E.har`,
        `traces/${"z".repeat(500)}%22%3E%3Cscript%3E.har`,
      ]);
    },
  );
});
