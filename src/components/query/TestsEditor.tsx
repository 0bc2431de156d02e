/** tests: the test names of every catalog; nothing to choose. */
export function TestsEditor() {
  return null;
}
