// Loaded by `streamscope record -- pi ...` (pi -e THIS_FILE): pi's built-in providers take
// their base URL from pi's own model list, never from a variable, so this points each one
// at the base-URL variable `record` sets for its side, for this run only.
const SIDES = [
  ["openai", "OPENAI_BASE_URL"],
  ["anthropic", "ANTHROPIC_BASE_URL"],
];

export default function (pi) {
  for (const [provider, variable] of SIDES) {
    const url = process.env[variable];
    if (url) pi.registerProvider(provider, { baseUrl: url });
  }
}
