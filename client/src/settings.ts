// The extension's settings, read in one place.
//
// Two groups: launch settings decide which process runs the server (a change restarts it), and server
// settings are what the server itself reads, as initializationOptions and over workspace/configuration
// (a change reaches it through workspace/didChangeConfiguration, which it registers for).
// Both are read per resource (the first workspace folder for launching, the scopeUri for the server).

import * as os from "os";
import * as vscode from "vscode";

export const SECTION = "gradsight";

/** Settings that decide how the server process is started; changing any of them restarts it. */
export const LAUNCH_KEYS = ["interpreter", "importStrategy", "path", "args"] as const;

export type ImportStrategy = "useBundled" | "fromEnvironment";
export type NotificationLevel = "off" | "onError" | "onWarning" | "always";

export interface LaunchSettings {
  interpreter: string[];
  importStrategy: ImportStrategy;
  path: string[];
  args: string[];
}

/** The shape the server reads: `initializationOptions.settings` and the `gradsight` configuration section. */
export interface ServerSettings {
  select: string[];
  ignore: string[];
  severity: Record<string, string>;
  inlayHints: string;
  /** `openFiles` (default) or `workspace`: which files the server publishes diagnostics for. */
  diagnosticMode: string;
  trace: { timeout: number; maxSteps: number; device: string; memoryMb: number };
  logLevel: string;
}

export function defaultPython(): string {
  return process.platform === "win32" ? "python" : "python3";
}

/**
 * Launch settings for `scope`. In an untrusted workspace only the bundled server may run, with the
 * default interpreter (no `interpreter` here) and no custom command: a workspace must not pick the
 * program we execute.
 */
export function launchSettings(scope: vscode.WorkspaceFolder | undefined): LaunchSettings {
  if (!vscode.workspace.isTrusted) {
    return { interpreter: [], importStrategy: "useBundled", path: [], args: [] };
  }
  const config = vscode.workspace.getConfiguration(SECTION, scope);
  return {
    interpreter: config.get<string[]>("interpreter", []).map((s) => substitute(s, scope)),
    importStrategy: config.get<ImportStrategy>("importStrategy", "useBundled"),
    path: config.get<string[]>("path", []).map((s) => substitute(s, scope)),
    args: config.get<string[]>("args", []).map((s) => substitute(s, scope)),
  };
}

export function serverSettings(scope: vscode.ConfigurationScope | undefined): ServerSettings {
  const config = vscode.workspace.getConfiguration(SECTION, scope);
  return {
    select: config.get<string[]>("select", []),
    ignore: config.get<string[]>("ignore", []),
    severity: config.get<Record<string, string>>("severity", {}),
    inlayHints: config.get<string>("inlayHints", "transitions"),
    diagnosticMode: config.get<string>("diagnosticMode", "openFiles"),
    trace: {
      timeout: config.get<number>("trace.timeout", 60),
      maxSteps: config.get<number>("trace.maxSteps", 20),
      device: config.get<string>("trace.device", "auto"),
      memoryMb: config.get<number>("trace.memoryMb", 4096),
    },
    logLevel: config.get<string>("logLevel", "info"),
  };
}

export function notificationLevel(): NotificationLevel {
  return vscode.workspace.getConfiguration(SECTION).get<NotificationLevel>("showNotifications", "onWarning");
}

/** Expands `${workspaceFolder}`, `${userHome}` and a leading `~`, as VS Code's own path settings do. */
function substitute(value: string, folder: vscode.WorkspaceFolder | undefined): string {
  const home = os.homedir();
  let out = value.replace(/\$\{userHome\}/g, home);
  if (folder) {
    out = out.replace(/\$\{workspaceFolder\}/g, folder.uri.fsPath);
  }
  return out === "~" || out.startsWith("~/") ? home + out.slice(1) : out;
}
