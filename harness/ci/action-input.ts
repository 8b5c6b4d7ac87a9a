// An input of the GitHub Action, as the runner hands it to a JavaScript action: INPUT_<NAME>, the name upper-cased
// with spaces made underscores and hyphens kept (INPUT_GRPC-PORT), trimmed as @actions/core trims it.
export function actionInput(name: string, env: Readonly<Record<string, string | undefined>> = process.env): string {
  return (env[`INPUT_${name.replace(/ /g, "_").toUpperCase()}`] ?? "").trim();
}
