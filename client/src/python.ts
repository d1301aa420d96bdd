// The interpreter the user picked in the Python extension, when that extension is installed.
//
// It is optional: without it (VS Code forks, code-server) gradsight falls back to the
// `gradsight.interpreter` setting or the default `python3`.

import { PythonExtension } from "@vscode/python-extension";
import * as vscode from "vscode";

const PYTHON_EXTENSION_ID = "ms-python.python";
/** gradsight's own requirement (pyproject.toml's requires-python). */
const MIN_PYTHON: [number, number] = [3, 10];

let api: Promise<PythonExtension | undefined> | undefined;

function pythonApi(): Promise<PythonExtension | undefined> {
  if (!vscode.extensions.getExtension(PYTHON_EXTENSION_ID)) {
    return Promise.resolve(undefined);
  }
  api ??= PythonExtension.api().catch(() => undefined);
  return api;
}

export interface ActiveInterpreter {
  command: string[];
  /** Set when the environment's Python is too old for gradsight. */
  problem?: string;
}

/** The active environment's interpreter for `resource`, or undefined without the Python extension. */
export async function activeInterpreter(resource: vscode.Uri | undefined): Promise<ActiveInterpreter | undefined> {
  const python = await pythonApi();
  if (!python) {
    return undefined;
  }
  const env = await python.environments.resolveEnvironment(python.environments.getActiveEnvironmentPath(resource));
  const executable = env?.executable.uri?.fsPath;
  if (!env || !executable) {
    return undefined;
  }
  const version = env.version;
  if (version && (version.major < MIN_PYTHON[0] || (version.major === MIN_PYTHON[0] && version.minor < MIN_PYTHON[1]))) {
    return {
      command: [executable],
      problem: `gradsight needs Python ${MIN_PYTHON.join(".")} or newer; the selected environment ` +
        `(${executable}) is Python ${version.major}.${version.minor}. Pick another one with "Python: Select Interpreter" ` +
        `or set gradsight.interpreter.`,
    };
  }
  return { command: [executable] };
}

/** Calls `listener` when the user switches environments in the Python extension. */
export async function onDidChangeInterpreter(listener: () => void): Promise<vscode.Disposable | undefined> {
  const python = await pythonApi();
  return python?.environments.onDidChangeActiveEnvironmentPath(() => listener());
}
