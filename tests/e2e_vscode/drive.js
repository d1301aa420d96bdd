// Drives a real VS Code (code-server in headless Chromium) the way a person would, against the
// installed gradsight extension. Started by test_vscode.py, which installs the .vsix, writes the
// settings and starts code-server; see docs/vscode.md ("How the end-to-end test works").
//
// Environment: CS_URL (code-server base URL), WORKSPACE (folder holding train.py), OUT_DIR (screenshots),
// USER_DATA_DIR (code-server's, for the settings file and the logs), PROFILE_DIR (Chromium profile),
// TRACE_PYTHON (an interpreter with torch: switch to it and run the autograd trace; empty: skip that part),
// CHROMIUM (default /usr/bin/chromium).
"use strict";

const fs = require("fs");
const path = require("path");
const { chromium } = require("playwright-core");

const env = (name, fallback) => process.env[name] ?? fallback;
const OUT = env("OUT_DIR", ".");
const WORKSPACE = env("WORKSPACE");
const USER_DATA_DIR = env("USER_DATA_DIR");
const TRACE_PYTHON = env("TRACE_PYTHON", "");
const SCENARIO = env("SCENARIO", "main");
const FILE = "train.py";
const BUGGY = "pred.numpy()";
const FIXED = "pred.detach().numpy()";
const LONG = 90_000;

const started = Date.now();
const step = (what) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)} s] ${what}`);

// Monaco renders spaces as no-break spaces.
const text = async (locator) => (await locator.innerText()).replace(/\u00a0/g, " ");

async function shot(page, name) {
  name = `${SCENARIO}-${name}`;
  await page.screenshot({ path: path.join(OUT, name) });
  step(`screenshot ${name}`);
}

async function dismissHover(page) {
  await page.mouse.move(5, 5);
  await page.keyboard.press("Escape");
  await page.locator(".monaco-hover:visible").waitFor({ state: "hidden", timeout: 5_000 }).catch(() => {});
}

/** gradsight's status bar item once the server is up (its label is set by the client's setStatus). */
function statusReady(page) {
  return page.locator('.statusbar-item[aria-label="gradsight: ready"]').first();
}

/** The gradsight diagnostic's squiggle (the only error on line 8 of train.py). */
function squiggle(page) {
  return page.locator(".monaco-editor .squiggly-error").first();
}

async function hoverSquiggle(page) {
  const box = await squiggle(page).boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
}

/** Waits until the gradsight output channel's log has `needle` after `after` (lines the client writes). */
async function waitForLog(after, needle) {
  const deadline = Date.now() + LONG;
  for (;;) {
    for (const file of logFiles(path.join(USER_DATA_DIR, "logs"))) {
      const log = fs.readFileSync(file, "utf8");
      const start = log.indexOf(after);
      if (start >= 0 && log.indexOf(needle, start) >= 0) {
        return;
      }
    }
    if (Date.now() > deadline) {
      throw new Error(`gradsight's log never said ${JSON.stringify(needle)} after ${JSON.stringify(after)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function logFiles(dir) {
  if (!fs.existsSync(dir)) {
    return [];
  }
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name === "gradsight.log")
    .map((e) => path.join(e.parentPath ?? e.path, e.name));
}

async function runCommand(page, title) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor();
  await input.fill(`>${title}`);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor();
  await page.keyboard.press("Enter");
}

/** Quick Open, as a person would; waits for the result row (Enter on an empty list opens nothing). */
async function openFile(page) {
  await page.keyboard.press("Control+P");
  await page.locator(".quick-input-widget input").waitFor();
  await page.keyboard.type(FILE);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: FILE }).first().waitFor();
  await page.keyboard.press("Enter");
  await page.locator(".monaco-editor .view-lines", { hasText: "np.histogram" }).waitFor({ timeout: LONG });
}

/** Loads the workbench, opens train.py, waits for gradsight's squiggle and its status "ready". */
async function openWorkspace(page) {
  await page.goto(`${env("CS_URL")}/?folder=${encodeURIComponent(WORKSPACE)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: LONG });
  step("workbench loaded");
  await page.waitForTimeout(1500);

  await openFile(page);
  step(`${FILE} open`);

  await squiggle(page).waitFor({ timeout: LONG });
  await statusReady(page).waitFor({ timeout: LONG });
  step("squiggle shown, status bar says ready");
  await shot(page, "01-diagnostic.png");
}

/** Restricted mode: the bundled server with the default interpreter still analyses; no trace. */
async function restricted(page) {
  await openWorkspace(page);
  await page.locator(".statusbar-item", { hasText: "Restricted Mode" }).first().waitFor();
  // The workspace's gradsight.interpreter (/nonexistent/python) was not used.
  await waitForLog("Interpreter: python3 (default, bundled server, untrusted workspace", "The server is ready.");
  step("restricted mode: bundled server on the default python3, not the workspace's interpreter");
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor();
  await input.fill(">gradsight:");
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "Restart server" }).first().waitFor();
  if (await page.locator(".quick-input-list .monaco-list-row", { hasText: "Run autograd trace" }).count()) {
    throw new Error("the command palette offers the autograd trace in an untrusted workspace");
  }
  step("the command palette does not offer the trace");
  await shot(page, "02-commands.png");
  await page.keyboard.press("Escape");
}

async function main(page) {
  await openWorkspace(page);

  // The Problems panel lists the finding with its code.
  await page.keyboard.press("Control+Shift+M");
  const problems = page.locator(".markers-panel");
  await problems.locator(".monaco-list-row", { hasText: /numpy/i }).first().waitFor({ timeout: LONG });
  const problemsText = await text(problems);
  if (!/GS2\d\d/.test(problemsText)) {
    throw new Error(`the Problems panel does not show a GS2xx code: ${problemsText}`);
  }
  step("Problems panel lists the finding");

  // Hover the squiggle: the explanation says why.
  await hoverSquiggle(page);
  const hover = page.locator(".monaco-hover:visible", { hasText: "numpy" }).first();
  await hover.waitFor({ timeout: 15_000 });
  const hoverText = (await text(hover)).toLowerCase();
  for (const needle of ["numpy", "requires grad"]) {
    if (!hoverText.includes(needle)) {
      throw new Error(`the hover does not mention ${JSON.stringify(needle)}: ${hoverText}`);
    }
  }
  step("hover explains the bug");
  await shot(page, "02-hover.png");
  await dismissHover(page);

  if (TRACE_PYTHON) {
    // Switch interpreters the way a person does, in the user settings JSON (code-server does not pass
    // edits made to that file behind its back to extensions): the client must restart the server.
    await runCommand(page, "Preferences: Open User Settings (JSON)");
    const settingsEditor = page.locator(".monaco-editor .view-lines", { hasText: "workbench.startupEditor" });
    await settingsEditor.waitFor({ timeout: LONG });
    await settingsEditor.click();
    await page.keyboard.press("Control+Home");
    await page.keyboard.press("End"); // after the opening brace
    await page.keyboard.press("Enter");
    // One line, inserted like a paste: no auto-closed brackets, no auto-indent.
    await page.keyboard.insertText(`"gradsight.interpreter": [${JSON.stringify(TRACE_PYTHON)}],`);
    await page.keyboard.press("Control+S");
    await waitForLog(`Interpreter: ${TRACE_PYTHON} (gradsight.interpreter`, "The server is ready.");
    await statusReady(page).waitFor({ timeout: LONG });
    step("server restarted with the interpreter from gradsight.interpreter");
    await page.locator(".tabs-container .tab", { hasText: FILE }).click();
    await page.locator(".monaco-editor .view-lines", { hasText: "np.histogram" }).waitFor();
    await runCommand(page, "gradsight: Run autograd trace for this file");
    await problems.locator(".monaco-list-row", { hasText: "confirmed by trace" }).first().waitFor({ timeout: LONG });
    await hoverSquiggle(page);
    await page.locator(".monaco-hover:visible", { hasText: "confirmed by trace" }).first().waitFor({ timeout: 15_000 });
    step("the trace confirmed the bug");
    await shot(page, "03-trace.png");
    await dismissHover(page);
  }

  // The quick fix from the light bulb: put the cursor on the squiggle, Ctrl+., pick gradsight's fix.
  const box = await squiggle(page).boundingBox();
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  await dismissHover(page);
  await page.keyboard.press("Control+.");
  await page.locator(".action-widget .monaco-list-row", { hasText: "detach" }).first().waitFor({ timeout: 15_000 });
  await shot(page, "04-quick-fix-menu.png");
  // Walk the menu with the keyboard to gradsight's fix, then Enter ("Enter to Apply").
  const focused = page.locator(".action-widget .monaco-list-row.focused");
  for (let i = 0; i < 10 && !/detach/.test(await focused.innerText().catch(() => "")); i++) {
    await page.keyboard.press("ArrowDown");
  }
  await page.keyboard.press("Enter");
  const lines = page.locator(".monaco-editor .view-lines").first();
  const deadline = Date.now() + 15_000;
  while (!(await text(lines)).includes(FIXED)) {
    if (Date.now() > deadline) {
      throw new Error(`the quick fix did not produce ${FIXED}: ${await text(lines)}`);
    }
    await page.waitForTimeout(200);
  }
  if ((await text(lines)).includes(BUGGY)) {
    throw new Error(`${BUGGY} is still in the file after the fix`);
  }
  await squiggle(page).waitFor({ state: "detached", timeout: LONG });
  step(`quick fix applied: ${FIXED}, squiggle gone`);
  await shot(page, "05-fixed.png");

  // The status bar item opens the output channel.
  await statusReady(page).click();
  await page.locator(".part.panel .monaco-editor .view-lines", { hasText: /\[info\].*gradsight/ }).waitFor({ timeout: 15_000 });
  step("status bar item opens the gradsight output");
  await shot(page, "06-output.png");
}

(async () => {
  fs.mkdirSync(OUT, { recursive: true });
  const context = await chromium.launchPersistentContext(env("PROFILE_DIR"), {
    executablePath: env("CHROMIUM", "/usr/bin/chromium"),
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync"],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  try {
    await (SCENARIO === "restricted" ? restricted(page) : main(page));
    step("OK");
  } catch (error) {
    console.log(`FAIL ${error.stack ?? error}`);
    await page.screenshot({ path: path.join(OUT, `${SCENARIO}-failure.png`) }).catch(() => {});
    process.exitCode = 1;
  } finally {
    await context.close();
  }
})();
