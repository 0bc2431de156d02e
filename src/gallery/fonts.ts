// Stands in for @grafana/ui's GlobalStyles font faces in the gallery build
// (webpack.config.ts swaps it in). Grafana serves Inter and Roboto Mono from
// its own public/fonts/, which the npm packages do not ship; without this the
// page would request them and log a 404 for each. Text falls back to the
// theme's font stack, which names Inter first (Debian's fonts-inter).
export function getFontStyles(): undefined {
  return undefined;
}
