// Starting the gradsight language server: which command, which environment, which client options.

import * as path from "path";
import * as vscode from "vscode";
import {
  Executable,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
} from "vscode-languageclient/node";
import { activeInterpreter } from "./python";
import { defaultPython, LaunchSettings, launchSettings, SECTION, serverSettings } from "./settings";

export interface ServerLaunch {
  executable: Executable;
  /** Shown in the status bar tooltip and the log. */
  description: string;
  /** Why the server cannot start with this configuration, if it cannot. */
  problem?: string;
}

/**
 * Resolves the command that starts the server: `gradsight.path` if set, else
 * `<interpreter> -m gradsight lsp`, where the interpreter is `gradsight.interpreter`, the Python
 * extension's active environment, or `python3`, in that order.
 */
export async function resolveLaunch(extensionPath: string): Promise<ServerLaunch> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const settings = launchSettings(folder);
  const bundledLibs = path.join(extensionPath, "bundled", "libs");
  // Security: `python -m` puts the working directory first on sys.path, so a workspace file named like a
  // module Python imports at start-up (json.py, contextlib.py...) would run in the server. Start it in the
  // extension's own directory, with PYTHONSAFEPATH (Python 3.11+) on top. The server finds the workspace
  // from the LSP initialize request, not from its working directory.
  const env: NodeJS.ProcessEnv = { ...process.env, PYTHONUNBUFFERED: "1", PYTHONSAFEPATH: "1" };
  // No `transport`: stdio without the `--stdio` flag vscode-languageclient would append.
  const options = { env, cwd: extensionPath };

  if (settings.path.length > 0) {
    const [command, ...args] = [...settings.path, ...settings.args];
    return { executable: { command, args, options }, description: command };
  }

  let interpreter = settings.interpreter;
  let problem: string | undefined;
  let source = "gradsight.interpreter";
  if (interpreter.length === 0 && vscode.workspace.isTrusted) {
    const active = await activeInterpreter(folder?.uri);
    interpreter = active?.command ?? [];
    problem = active?.problem;
    source = "Python extension";
  }
  if (interpreter.length === 0) {
    interpreter = [defaultPython()];
    source = "default";
  }
  if (settings.importStrategy === "useBundled") {
    // The bundled libraries go first so they win over whatever the environment has installed.
    // GRADSIGHT_BUNDLED_LIBS lets the server remove them again from the traced script's path.
    env.PYTHONPATH = [bundledLibs, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter);
    env.GRADSIGHT_BUNDLED_LIBS = bundledLibs;
  }
  const [command, ...prefix] = interpreter;
  return {
    executable: {
      command,
      args: [...prefix, "-m", "gradsight", "lsp", ...settings.args],
      options,
    },
    description: `${interpreter.join(" ")} (${source}, ${describeStrategy(settings)})`,
    problem,
  };
}

function describeStrategy(settings: LaunchSettings): string {
  if (!vscode.workspace.isTrusted) {
    return "bundled server, untrusted workspace: static analysis only";
  }
  return settings.importStrategy === "useBundled" ? "bundled server" : "server from the environment";
}

/** `isCurrent` says whether a client is still the one in use (not being stopped for a restart). */
export function createClient(
  launch: ServerLaunch,
  outputChannel: vscode.LogOutputChannel,
  isCurrent: (client: LanguageClient) => boolean,
): LanguageClient {
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "python" },
      { scheme: "untitled", language: "python" },
      // Python cells of Jupyter notebooks (the server announces notebookDocumentSync for them).
      { notebook: "jupyter-notebook", language: "python" },
    ],
    outputChannel,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    // A function, so that every (re)start sends the current settings and trust.
    initializationOptions: () => ({ settings: serverSettings(vscode.workspace.workspaceFolders?.[0]), trusted: vscode.workspace.isTrusted }),
    middleware: {
      workspace: {
        // Pull model: tell the server *that* settings changed (`settings: null`) and let it ask for them
        // through workspace/configuration below, so it only ever sees one shape of settings. A client
        // retired by a restart (launch settings changed) is told nothing.
        didChangeConfiguration: async (_sections, next) => (isCurrent(client) ? next(undefined) : undefined),
        // Answer the server's `gradsight` section with exactly the shape of initializationOptions.settings,
        // not the raw configuration (which also holds client-only settings such as `path`).
        configuration: async (params, token, next) => {
          const result = await next(params, token);
          if (!Array.isArray(result)) {
            return result;
          }
          return params.items.map((item, i) =>
            item.section === SECTION ? serverSettings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined) : result[i],
          );
        },
      },
    },
  };
  const client = new LanguageClient(SECTION, "gradsight", launch.executable, clientOptions);
  return client;
}
