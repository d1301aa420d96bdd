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
const { execFileSync } = require("child_process");
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
const REPOSITORY_RAW = "https://raw.githubusercontent.com/gradsight/gradsight/main/";

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
  return page.locator(".monaco-editor .squiggly-error:visible").first();
}

/** The squiggle's box once it is on screen (Monaco re-renders decorations when diagnostics change). */
async function squiggleBox(page) {
  for (let i = 0; i < 50; i++) {
    await squiggle(page).waitFor({ timeout: LONG });
    const box = await squiggle(page).boundingBox().catch(() => null);
    if (box) {
      return box;
    }
    await page.waitForTimeout(100);
  }
  throw new Error("the squiggle never settled on screen");
}

async function hoverSquiggle(page) {
  const box = await squiggleBox(page);
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

async function openPalette(page, title) {
  // F1 can be swallowed while the workbench moves the focus (just after a settings save and a tab switch the
  // palette's input was attached but never shown: `fill` timed out on a clean clone); close what is open, focus the
  // editor and press it again, a few times, before giving up.
  const input = page.locator(".quick-input-widget input");
  for (let tries = 0; ; tries++) {
    await page.keyboard.press("F1");
    try {
      await input.fill(`>${title}`, { timeout: 5_000 });
      return;
    } catch (err) {
      if (tries >= 3) throw err;
      await page.keyboard.press("Escape");
      await page.keyboard.press("Control+1");
      await page.waitForTimeout(500);
    }
  }
}

async function runCommand(page, title) {
  const row = page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first();
  for (let attempt = 0; ; attempt++) {
    await openPalette(page, title);
    try {
      await row.waitFor({ timeout: attempt === 0 ? 10_000 : 30_000 });
      break;
    } catch (err) {
      if (attempt > 0) throw err;
      // A command shown only `when: editorLangId == python` is missing while the editor just opened from Quick
      // Open has not taken the focus yet (the palette reads the focused editor): focus it and ask again.
      await page.keyboard.press("Escape");
      await page.keyboard.press("Control+1");
      await page.waitForTimeout(500);
    }
  }
  await page.keyboard.press("Enter");
}

/** Checks that cannot stop the scenario (the rest still runs): reported together at the end. */
const problemsFound = [];
function softFail(message) {
  problemsFound.push(message);
  step(`PROBLEM: ${message}`);
}

/** Loads the workbench, waits for the server (started on activation, before any file is open), opens
 *  train.py and measures the time from Enter in Quick Open to gradsight's squiggle. */
async function openWorkspace(page) {
  const loadStart = Date.now();
  await page.goto(`${env("CS_URL")}/?folder=${encodeURIComponent(WORKSPACE)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: LONG });
  step("workbench loaded");
  // The extension activates on `workspaceContains:**/*.py`, so the server starts with the window.
  await statusReady(page).waitFor({ timeout: LONG });
  step(`server ready before any file is open (${Date.now() - loadStart} ms after navigation)`);
  await page.waitForTimeout(1000);

  await page.keyboard.press("Control+P");
  await page.locator(".quick-input-widget input").waitFor();
  await page.keyboard.type(FILE);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: FILE }).first().waitFor();
  const opened = Date.now();
  await page.keyboard.press("Enter");
  await squiggle(page).waitFor({ timeout: LONG });
  const firstDiagnostic = Date.now() - opened;
  console.log(`open-to-first-diagnostic: ${firstDiagnostic} ms`);
  step(`${FILE} open, squiggle shown`);
  await page.locator(".monaco-editor .view-lines", { hasText: "np.histogram" }).waitFor({ timeout: LONG });
  await shot(page, "01-diagnostic.png");
  return firstDiagnostic;
}

/** Restricted mode: the bundled server with the default interpreter still analyses; no trace. */
async function restricted(page) {
  await openWorkspace(page);
  await page.locator(".statusbar-item", { hasText: "Restricted Mode" }).first().waitFor();
  // The workspace's gradsight.interpreter (/nonexistent/python) was not used.
  await waitForLog("Interpreter: python3 (default, bundled server, untrusted workspace", "The server is ready.");
  step("restricted mode: bundled server on the default python3, not the workspace's interpreter");
  await openPalette(page, "gradsight:");
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "Restart server" }).first().waitFor();
  if (await page.locator(".quick-input-list .monaco-list-row", { hasText: "Run autograd trace" }).count()) {
    throw new Error("the command palette offers the autograd trace in an untrusted workspace");
  }
  step("the command palette does not offer the trace");
  await shot(page, "02-commands.png");
  await page.keyboard.press("Escape");
}

/** diagnosticMode "workspace": the Problems panel lists train.py's finding before any file is opened. */
async function workspaceMode(page) {
  await page.goto(`${env("CS_URL")}/?folder=${encodeURIComponent(WORKSPACE)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: LONG });
  await statusReady(page).waitFor({ timeout: LONG });
  step("server ready");
  await page.keyboard.press("Control+Shift+M");
  const problems = page.locator(".markers-panel");
  await problems.locator(".monaco-list-row", { hasText: "train.py" }).first().waitFor({ timeout: LONG });
  await problems.locator(".monaco-list-row", { hasText: /GS2\d\d/ }).first().waitFor({ timeout: LONG });
  const open = await page.locator(".tabs-container .tab").count();
  if (open !== 0) {
    throw new Error(`${open} editor(s) open: the finding must come without opening train.py`);
  }
  step("the Problems panel lists train.py's finding; no file is open");
  await shot(page, "01-problems.png");
}

/** The editor line whose text matches `pattern` (Monaco renders spaces as no-break spaces; inlay hints
 *  are part of the line's text). */
function viewLine(page, pattern) {
  return page.locator(".monaco-editor .view-line", { hasText: pattern }).first();
}

async function focusTab(page, name) {
  await page.locator(".tabs-container .tab", { hasText: name }).first().click();
  await page.locator(".tabs-container .tab.active", { hasText: name }).first().waitFor();
}

async function main(page) {
  await openWorkspace(page);

  // The Problems panel lists the finding with its code; its first sentence is short enough to read there.
  await page.keyboard.press("Control+Shift+M");
  const problems = page.locator(".markers-panel");
  const row = problems.locator(".monaco-list-row", { hasText: /GS2\d\d/ }).first();
  await row.waitFor({ timeout: LONG });
  const rowText = (await text(row)).replace(/\s+/g, " ").trim();
  const message = rowText.split(/\s*gradsight\s*\(GS/)[0];
  const firstSentence = message.split(/(?<=[.;:])\s/)[0];
  console.log(`problems row: ${rowText}`);
  if (!/numpy|NumPy/.test(rowText)) {
    softFail(`the Problems row does not say what is wrong: ${rowText}`);
  }
  if (firstSentence.length > 110) {
    softFail(`the message's first sentence has ${firstSentence.length} characters (more than 110): ${firstSentence}`);
  }
  step("Problems panel lists the finding");
  await shot(page, "02-problems.png");

  // Hover `pred` (line 7), whose value comes from models.py: the hover links to models.py line 10, and
  // the link opens that file at that line.
  const predLine = viewLine(page, /^pred\b.*=.*net\(batch\)/);
  const predBox = await predLine.boundingBox();
  await page.mouse.move(predBox.x + 12, predBox.y + predBox.height / 2);
  const crossHover = page.locator(".monaco-hover:visible", { hasText: "models.py" }).first();
  try {
    await crossHover.waitFor({ timeout: 15_000 });
    step(`hover on pred: ${(await text(crossHover)).replace(/\s+/g, " ").slice(0, 200)}`);
    await page.waitForTimeout(400); // the hover fades in
    await shot(page, "03-hover-other-file.png");
    const link = crossHover.locator("a", { hasText: /models\.py/ }).first();
    const target = (await link.innerText()).match(/line (\d+)/);
    await link.click();
    await page.locator(".tabs-container .tab.active", { hasText: "models.py" }).first().waitFor({ timeout: 15_000 });
    const selection = page.locator('[id="status.editor.selection"]');
    // The status bar follows the cursor a moment after the editor opens.
    await selection.filter({ hasText: `Ln ${target?.[1]},` }).waitFor({ timeout: 5_000 }).catch(() => {});
    const where = await selection.innerText();
    if (!target || !where.includes(`Ln ${target[1]},`)) {
      softFail(`the hover link opened models.py at "${where}", not line ${target?.[1]}`);
    } else {
      step(`the hover link opened models.py at ${where}`);
    }
    await shot(page, "04-link-opened.png");
  } catch (error) {
    softFail(`cross-file hover link: ${error.message.split("\n")[0]}`);
    await shot(page, "03-hover-other-file.png");
  }
  await dismissHover(page);
  await focusTab(page, FILE);

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
    await focusTab(page, FILE);
    await page.locator(".monaco-editor .view-lines", { hasText: "np.histogram" }).waitFor();
    await runCommand(page, "gradsight: Run autograd trace for this file");
    const toasts = page.locator(".notifications-toasts .notification-toast");
    // While the script runs: a progress notification with a Cancel button (it may be gone already).
    const running = toasts.filter({ hasText: "tracing train.py" }).first();
    if (await running.waitFor({ timeout: 5_000 }).then(() => true, () => false)) {
      if (!(await running.locator(".monaco-button", { hasText: "Cancel" }).count())) {
        softFail("the trace's progress notification has no Cancel button");
      }
      await page.waitForTimeout(700); // the toast slides in
      await shot(page, "05-trace-running.png").catch(() => {});
    }
    // When it ends: the counts, and a Show action.
    const done = toasts.filter({ hasText: "trace of train.py:" }).first();
    await done.waitFor({ timeout: LONG });
    const doneText = (await text(done)).replace(/\s+/g, " ");
    step(`trace notification: ${doneText}`);
    if (!/\d+ findings?/.test(doneText) || !/confirmed/.test(doneText)) {
      softFail(`the trace notification does not give the counts: ${doneText}`);
    }
    await shot(page, "06-trace-notification.png");
    await done.locator(".monaco-button", { hasText: "Show" }).first().click();
    try {
      await problems.locator(".monaco-list-row", { hasText: "confirmed by trace" }).first().waitFor({ timeout: 30_000 });
      await hoverSquiggle(page);
      await page.locator(".monaco-hover:visible", { hasText: "confirmed by trace" }).first().waitFor({ timeout: 15_000 });
      step("the trace confirmed the bug (Problems panel and hover)");
      await page.waitForTimeout(400); // the hover fades in
    } catch (error) {
      softFail(`no finding marked "confirmed by trace": ${error.message.split("\n")[0]}`);
    }
    await shot(page, "07-confirmed.png");
    await dismissHover(page);
    await cancelTrace(page);
  }

  // The quick fix from the light bulb: put the cursor on the squiggle, Ctrl+., pick gradsight's fix.
  await focusTab(page, FILE);
  const box = await squiggleBox(page);
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  await dismissHover(page);
  await page.keyboard.press("Control+.");
  await page.locator(".action-widget .monaco-list-row", { hasText: "detach" }).first().waitFor({ timeout: 15_000 });
  await shot(page, "08-quick-fix-menu.png");
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
  await shot(page, "09-fixed.png");

  // The status bar item opens the output channel.
  await statusReady(page).click();
  await page.locator(".part.panel .monaco-editor .view-lines", { hasText: /\[info\].*gradsight/ }).waitFor({ timeout: 15_000 });
  step("status bar item opens the gradsight output");
  await shot(page, "10-output.png");
  await page.keyboard.press("Control+J"); // hide the panel: the extension page gets the whole height

  // Normal use (open, hover, trace, cancel, fix) writes no [error] line to gradsight's output channel.
  const errors = logFiles(path.join(USER_DATA_DIR, "logs"))
    .flatMap((file) => fs.readFileSync(file, "utf8").split("\n"))
    .filter((line) => line.includes("[error]"));
  if (errors.length) {
    softFail(`[error] lines in gradsight's output: ${errors.slice(0, 3).join(" | ")}`);
  } else {
    step("no [error] line in gradsight's output");
  }

  await extensionPage(page);
  if (problemsFound.length) {
    throw new Error(`${problemsFound.length} check(s) failed:\n- ${problemsFound.join("\n- ")}`);
  }
}

/** The traced script's processes (its path is on their command line). */
function tracedProcesses(script) {
  return execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes(script));
}

/** Traces slow.py (a minute of sleep) and presses Cancel on the progress notification: the script stops. */
async function cancelTrace(page) {
  const script = path.join(WORKSPACE, "slow.py");
  await page.keyboard.press("Control+P");
  await page.locator(".quick-input-widget input").waitFor();
  await page.keyboard.type("slow.py");
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "slow.py" }).first().waitFor();
  await page.keyboard.press("Enter");
  await page.locator(".tabs-container .tab.active", { hasText: "slow.py" }).first().waitFor();
  await runCommand(page, "gradsight: Run autograd trace for this file");
  const running = page.locator(".notifications-toasts .notification-toast", { hasText: "tracing slow.py" }).first();
  await running.waitFor({ timeout: 15_000 });
  // Wait until the script really runs, then cancel.
  for (let i = 0; i < 100 && tracedProcesses(script).length === 0; i++) {
    await page.waitForTimeout(100);
  }
  if (tracedProcesses(script).length === 0) {
    softFail("the trace of slow.py never started a process");
  }
  await page.waitForTimeout(700); // the toast slides in
  await shot(page, "07b-trace-cancel.png");
  await running.locator(".monaco-button", { hasText: "Cancel" }).first().click();
  await page.locator(".statusbar-item", { hasText: "trace of slow.py cancelled" }).first()
    .waitFor({ timeout: 15_000 })
    .catch(() => softFail("no 'trace of slow.py cancelled' in the status bar after Cancel"));
  for (let i = 0; i < 100 && tracedProcesses(script).length > 0; i++) {
    await page.waitForTimeout(100);
  }
  const left = tracedProcesses(script);
  if (left.length > 0) {
    softFail(`the traced script still runs after Cancel: ${left.join(" | ")}`);
  } else {
    step("Cancel stopped the trace of slow.py: no process left");
  }
}

/** The extension's page in the Extensions view: the icon, and every README image loaded. */
async function extensionPage(page) {
  await page.keyboard.press("Control+Shift+X");
  // The view focuses its search box when it opens.
  await page.locator(".extensions-viewlet .suggest-input-container").first().waitFor({ timeout: 15_000 });
  await page.waitForTimeout(500);
  await page.keyboard.insertText("@installed gradsight");
  const item = page.locator(".extensions-viewlet .monaco-list-row", { hasText: "gradsight" }).first();
  await item.waitFor({ timeout: 30_000 });
  await item.click();
  const editor = page.locator(".extension-editor").first();
  await editor.waitFor({ timeout: 30_000 });
  const icon = editor.locator(".header .icon-container img").first();
  await icon.waitFor({ timeout: 15_000 });
  await page.waitForFunction((img) => img.complete, await icon.elementHandle(), { timeout: 15_000 }).catch(() => {});
  const iconOk = await icon.evaluate((img) => img.complete && img.naturalWidth > 0);
  if (!iconOk) {
    softFail(`the extension page's icon did not load (${await icon.getAttribute("src")})`);
  }
  // The README is in a webview (nested iframes): find its frame, wait for its images.
  let images;
  let readmeFrame;
  for (let i = 0; i < 60 && !images; i++) {
    for (const frame of page.frames()) {
      const found = await frame.evaluate(() => document.body?.innerText.includes("gradsight finds PyTorch autograd mistakes")
        ? [...document.images].map((img) => ({ src: img.src, ok: img.complete && img.naturalWidth > 0, complete: img.complete }))
        : undefined).catch(() => undefined);
      if (found && found.every((img) => img.complete)) {
        images = found;
        readmeFrame = frame;
      }
    }
    await page.waitForTimeout(500);
  }
  if (!images?.length) {
    softFail("the extension page shows no README image");
  } else {
    for (const img of images.filter((i) => !i.ok)) {
      softFail(`a README image on the extension page did not load: ${img.src}`);
    }
    step(`extension page: icon ${iconOk ? "loaded" : "broken"}, README images: ${images.map((i) => `${i.src} ${i.ok ? "loaded" : "broken"}`).join(", ")}`);
  }
  // Scroll the first image into view, so that the screenshot shows it next to the icon.
  await readmeFrame?.evaluate(() => document.images[0]?.scrollIntoView({ block: "end" })).catch(() => {});
  await page.mouse.move(900, 700); // away from the list item, whose tooltip would cover the header
  await page.waitForTimeout(600);
  await shot(page, "11-extension-page.png");
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
  // The README's images are https URLs of files in the repository; there is no network here, so answer
  // them from this checkout: an image then loads exactly when VS Code accepts the URL and the file
  // exists at that path in the repository.
  await context.route(`${REPOSITORY_RAW}**`, async (route) => {
    const file = path.join(process.cwd(), new URL(route.request().url()).pathname.split("/").slice(4).join("/"));
    if (fs.existsSync(file)) {
      await route.fulfill({ path: file, headers: { "access-control-allow-origin": "*" } });
    } else {
      await route.fulfill({ status: 404, body: "not in the repository" });
    }
  });
  const page = context.pages()[0] ?? (await context.newPage());
  try {
    await ({ restricted, workspace: workspaceMode }[SCENARIO] ?? main)(page);
    step("OK");
  } catch (error) {
    console.log(`FAIL ${error.stack ?? error}`);
    await page.screenshot({ path: path.join(OUT, `${SCENARIO}-failure.png`) }).catch(() => {});
    process.exitCode = 1;
  } finally {
    await context.close();
  }
})();
