// Starts `ffl lsp` (the language server of the ffl command line) for .ffl files.
// Plain JavaScript, so the extension needs no build step besides packaging.
"use strict";

const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const [command, ...args] = vscode.workspace.getConfiguration("ffl").get("server.command", ["ffl", "lsp"]);
  client = new LanguageClient(
    "ffl",
    "FFL language server",
    { command, args },
    {
      documentSelector: [{ scheme: "file", language: "ffl" }],
      // files changed on disk (a checkout, a generator) are checked again too
      synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher("**/*.ffl") },
    }
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
