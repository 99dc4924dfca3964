// typescript-eslint over all code, run by `npm test` (pretest). Outside the test suites: no `any`,
// no function longer than a screen (80 lines, blank lines and comments not counted).
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", "rendered/", "bin/", ".tools/", ".e2e/", ".preview/", "test/e2e/charts/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_", caughtErrors: "none" },
      ],
      "max-lines-per-function": ["error", { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // the suites and their helpers: long describe blocks and loose test doubles are their nature
    files: ["test/**/*.test.ts", "test/helpers/**", "test/setup/**", "test/e2e/fixtures/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off", "max-lines-per-function": "off" },
  },
  {
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs" },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
