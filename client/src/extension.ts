// gradsight's VS Code client: starts the Python language server, forwards settings and commands, and
// shows the server's state in the status bar. All analysis happens in the server (`python -m gradsight lsp`).

import * as path from "path";
import * as vscode from "vscode";
import {
  ExecuteCommandRequest,
  LanguageClient,
  MessageType,
  ShowMessageNotification,
  State,
} from "vscode-languageclient/node";
import { onDidChangeInterpreter } from "./python";
import { createClient, resolveLaunch } from "./server";
import { LAUNCH_KEYS, notificationLevel, SECTION } from "./settings";

type ServerState = "starting" | "ready" | "error";
type Level = "error" | "warning" | "info";

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel;
let status: vscode.StatusBarItem;
let launchDescription = "";
/** Restarts run one after another, never interleaved. */
let restarts: Promise<void> = Promise.resolve();

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("gradsight", { log: true });
  status = vscode.window.createStatusBarItem("gradsight.status", vscode.StatusBarAlignment.Right, 100);
  status.name = "gradsight";
  status.command = "gradsight.showOutput";
  const restart = () => {
    // Retire the running client at once, so that nothing (a command, a settings notification) is sent
    // to it while it stops; the queued step stops it, and whichever client an earlier step started.
    const retired = client;
    client = undefined;
    setStatus("starting");
    restarts = restarts
      .then(async () => {
        await stopServer(retired);
        await stopServer(client);
        client = undefined;
        await startServer(context.extensionPath);
      })
      .catch((error) => {
        output.error(`Starting the server: ${errorMessage(error)}`);
        setStatus("error", errorMessage(error));
      });
    return restarts;
  };
  context.subscriptions.push(
    output,
    status,
    vscode.commands.registerCommand("gradsight.restart", restart),
    vscode.commands.registerCommand("gradsight.showOutput", () => output.show()),
    vscode.commands.registerCommand("gradsight.runTraceForFile", runTraceForFile),
    vscode.commands.registerCommand("gradsight.fixAllSafe", fixAllSafe),
    // Other gradsight settings reach the running server through workspace/didChangeConfiguration
    // (it registers for the `gradsight` section; see the configuration middleware in server.ts).
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (LAUNCH_KEYS.some((key) => event.affectsConfiguration(`${SECTION}.${key}`))) {
        void restart();
      }
    }),
    // Trust changes the interpreter, the import strategy and what the server may run.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void restart()),
  );
  const interpreterChanges = await onDidChangeInterpreter(() => void restart());
  if (interpreterChanges) {
    context.subscriptions.push(interpreterChanges);
  }
  await restart();
}

export async function deactivate(): Promise<void> {
  await stopServer(client);
}

async function startServer(extensionPath: string): Promise<void> {
  const launch = await resolveLaunch(extensionPath);
  launchDescription = launch.description;
  const { command, args = [] } = launch.executable;
  output.info(`Starting the server: ${[command, ...args].join(" ")}`);
  output.info(`Interpreter: ${launch.description}`);
  if (launch.problem) {
    setStatus("error", launch.problem);
    notify("error", launch.problem);
    return;
  }
  const next = createClient(launch, output, (c) => c === client);
  // The server's window/showMessage pops up only as far as gradsight.showNotifications allows (the
  // server logs its messages itself).
  next.onNotification(ShowMessageNotification.type, ({ type, message }) =>
    popUp(type === MessageType.Error ? "error" : type === MessageType.Warning ? "warning" : "info", message),
  );
  next.onDidChangeState((event) => {
    if (client !== next) {
      return; // a client being replaced
    }
    if (event.newState === State.Running) {
      setStatus("ready");
    } else if (event.newState === State.Starting) {
      setStatus("starting");
    } else {
      setStatus("error", "the server stopped");
    }
  });
  client = next;
  try {
    await next.start();
    output.info("The server is ready.");
  } catch (error) {
    // vscode-languageclient has already shown its own error message; log and show the state.
    output.error(`The server failed to start: ${errorMessage(error)}`);
    setStatus("error", "the server failed to start");
  }
}

async function stopServer(old: LanguageClient | undefined): Promise<void> {
  if (!old) {
    return;
  }
  try {
    await old.dispose(2000);
  } catch (error) {
    output.warn(`Stopping the server: ${errorMessage(error)}`);
  }
}

function setStatus(state: ServerState, detail?: string): void {
  const icon = { starting: "$(loading~spin)", ready: "$(pass)", error: "$(error)" }[state];
  status.text = `${icon} gradsight`;
  status.tooltip = [`gradsight: ${state}${detail ? ` (${detail})` : ""}`, launchDescription, "Click to show the output."]
    .filter(Boolean)
    .join("\n");
  status.accessibilityInformation = { label: `gradsight: ${state}` };
  status.backgroundColor = state === "error" ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
  status.show();
}

/** Logs `message` and pops it up if `gradsight.showNotifications` allows that level. */
function notify(level: Level, message: string): void {
  ({ error: output.error, warning: output.warn, info: output.info })[level].call(output, message);
  popUp(level, message);
}

/** Pops `message` up if `gradsight.showNotifications` allows that level. */
function popUp(level: Level, message: string): void {
  const rank = { info: 0, warning: 1, error: 2 }[level];
  const threshold = { always: 0, onWarning: 1, onError: 2, off: 3 }[notificationLevel()] ?? 2;
  if (rank < threshold) {
    return;
  }
  const show = { error: vscode.window.showErrorMessage, warning: vscode.window.showWarningMessage,
    info: vscode.window.showInformationMessage }[level];
  void show(message, "Show output").then((choice) => choice && output.show());
}

/** What `gradsight.runTrace` answers (lsp/tracing.py); every key is optional, older servers send fewer. */
interface TraceResult {
  findings?: number;
  confirmed?: number;
  errors?: number;
  warnings?: number;
  cancelled?: boolean;
  /** A refusal (a string, already shown by the server) or the exception the script stopped with. */
  error?: string | { type?: string; message?: string; line?: number } | null;
  stopped?: string | null;
  files?: string[];
}

async function runTraceForFile(): Promise<void> {
  const document = activePythonDocument();
  if (!document) {
    return;
  }
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage(
      "gradsight: the autograd trace runs your script, so it is disabled in untrusted workspaces. Trust this workspace to run it.",
    );
    return;
  }
  if (document.isUntitled) {
    void vscode.window.showWarningMessage("gradsight: save the file first; the autograd trace runs it from disk.");
    return;
  }
  if (document.isDirty && !(await document.save())) {
    return;
  }
  const name = path.basename(document.uri.fsPath);
  // A notification with a Cancel button while the script runs (the server's own work-done progress only
  // reaches the status bar). Cancelling sends $/cancelRequest, which stops the script's process group.
  // `quiet`: the server leaves the end-of-trace message to this client, which adds a Show action.
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `gradsight: tracing ${name}`, cancellable: true },
    async (progress, token) => {
      progress.report({ message: "running the script…" });
      return executeServerCommand<TraceResult>(
        "gradsight.runTrace",
        (c) => [{ uri: c.code2ProtocolConverter.asUri(document.uri), quiet: true }],
        token,
      );
    },
  );
  if (result === undefined) {
    return; // not running, failed (already reported) or cancelled before an answer
  }
  if (result.cancelled) {
    vscode.window.setStatusBarMessage(`gradsight: trace of ${name} cancelled`, 5000);
    return;
  }
  if (typeof result.error === "string" && result.confirmed === undefined) {
    return; // refused: the server has shown why
  }
  output.info(`Trace of ${name}: ${describeTrace(result)}`);
  if (notificationLevel() === "off") {
    return;
  }
  const show = "Show";
  const level = (result.errors ?? 0) > 0 ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
  // Not awaited: the command ends with the trace, not when the notification is dismissed.
  void level(`gradsight: trace of ${name}: ${describeTrace(result)}`, show).then((choice) =>
    choice === show ? showTraceFindings(document) : undefined,
  );
}

/** "2 findings (1 error, 1 warning), 1 static finding confirmed; the script stopped with …". */
export function describeTrace(result: TraceResult): string {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const parts: string[] = [];
  if (typeof result.findings === "number") {
    const kinds = [
      typeof result.errors === "number" && result.errors > 0 ? plural(result.errors, "error") : "",
      typeof result.warnings === "number" && result.warnings > 0 ? plural(result.warnings, "warning") : "",
    ].filter(Boolean);
    parts.push(plural(result.findings, "finding") + (kinds.length ? ` (${kinds.join(", ")})` : ""));
  }
  if (typeof result.confirmed === "number") {
    parts.push(`${plural(result.confirmed, "static finding")} confirmed`);
  }
  let text = parts.join(", ") || "done";
  const error = result.error;
  if (error && typeof error === "object") {
    const where = typeof error.line === "number" ? ` at line ${error.line}` : "";
    text += `; the script stopped with ${error.type ?? "an error"}${where}`;
  } else if (typeof error === "string" && error) {
    text += `; ${error}`;
  } else if (typeof result.stopped === "string" && result.stopped) {
    text += `; stopped: ${result.stopped}`;
  }
  return text;
}

/** The Show action: the Problems panel, and the traced file at its first finding from the trace. */
async function showTraceFindings(document: vscode.TextDocument): Promise<void> {
  const fromTrace = vscode.languages
    .getDiagnostics(document.uri)
    .filter((d) => d.source?.startsWith("gradsight") && (/confirmed by trace/.test(d.message) || /^GS9/.test(diagnosticCode(d))))
    .sort((a, b) => a.range.start.compareTo(b.range.start));
  const editor = await vscode.window.showTextDocument(document, { preview: false });
  if (fromTrace.length > 0) {
    editor.selection = new vscode.Selection(fromTrace[0].range.start, fromTrace[0].range.start);
    editor.revealRange(fromTrace[0].range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }
  await vscode.commands.executeCommand("workbench.actions.view.problems");
}

function diagnosticCode(diagnostic: vscode.Diagnostic): string {
  const code = diagnostic.code;
  return String(typeof code === "object" && code !== null ? code.value : code ?? "");
}

async function fixAllSafe(): Promise<void> {
  const document = activePythonDocument();
  if (!document) {
    return;
  }
  const result = await executeServerCommand<{ applied?: number; error?: string }>("gradsight.fixAll", (c) => [
    { uri: c.code2ProtocolConverter.asUri(document.uri), version: document.version },
  ]);
  if (result?.error) {
    notify("warning", `gradsight: fix all: ${result.error}`);
  } else if (result) {
    const n = result.applied ?? 0;
    vscode.window.setStatusBarMessage(`gradsight: ${n === 0 ? "no safe fixes" : `applied ${n} safe fix${n === 1 ? "" : "es"}`}`, 5000);
  }
}

function activePythonDocument(): vscode.TextDocument | undefined {
  const document = vscode.window.activeTextEditor?.document;
  if (document?.languageId !== "python") {
    void vscode.window.showWarningMessage("gradsight: open a Python file first.");
    return undefined;
  }
  return document;
}

/** Sends workspace/executeCommand to the server; undefined when it is not running or the request failed. */
async function executeServerCommand<T>(
  command: string,
  args: (c: LanguageClient) => unknown[],
  token?: vscode.CancellationToken,
): Promise<T | undefined> {
  const c = client;
  if (!c?.isRunning()) {
    notify("error", "gradsight: the server is not running.");
    return undefined;
  }
  try {
    const params = { command, arguments: args(c) };
    const result = (await (token ? c.sendRequest(ExecuteCommandRequest.type, params, token)
      : c.sendRequest(ExecuteCommandRequest.type, params))) as T;
    output.debug(`${command}: ${JSON.stringify(result)}`);
    if ((result === null || result === undefined) && token?.isCancellationRequested) {
      return { cancelled: true } as T;
    }
    return result ?? undefined;
  } catch (error) {
    if (token?.isCancellationRequested) {
      output.info(`${command}: cancelled`);
      return { cancelled: true } as T;
    }
    notify("error", `gradsight: ${command} failed: ${errorMessage(error)}`);
    return undefined;
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
