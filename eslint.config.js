// Flat config: typescript-eslint's strict rules over all TypeScript sources.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: [".next/**", "dist/**", "node_modules/**", ".package-test/**", "next-env.d.ts", "test-results/**", "playwright-report/**"] },
  js.configs.recommended,
  ...tseslint.configs.strict,
  {
    files: ["**/*.js"],
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly" } },
  },
  {
    // Tests and scripts may assert what they just set up; a wrong guess fails the test loudly.
    files: ["**/*.test.ts", "test/**", "scripts/**", "bench/**", "e2e/**"],
    rules: { "@typescript-eslint/no-non-null-assertion": "off" },
  },
  {
    // docs/architecture.md#object-shapes: on Node 20 such an object gets a hidden class of its own every time.
    files: ["lib/**", "web/**", "app/**", "components/**", "proxy.ts", "instrumentation.ts", "cli/**"],
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "ObjectExpression[properties.length>1] > SpreadElement:first-child",
          message:
            "An object that starts with a spread and has more after it gets a hidden class of its own on Node 20: use extend() from lib/objects.ts.",
        },
      ],
    },
  },
  {
    // docs/library.md: the app, the CLI, the tests and the scripts reach the resolver only through the
    // package's exports, as anyone who installs it would; a path into lib/ is a deep import.
    files: ["**/*.{ts,tsx,js,mjs}"],
    ignores: ["lib/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^(\\.\\.?/)+lib(/|$)|^@/lib(/|$)",
              message: "Import the resolver through its package, ident-resolver (docs/library.md).",
            },
          ],
        },
      ],
    },
  },
  {
    // The package itself never imports itself by name, nor reaches outside its folder (its tests may use the test helpers).
    files: ["lib/**/*.{ts,mjs}"],
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^ident-resolver(/|$)|^(\\.\\./)+(app|web|cli|components|bench|scripts|test)/|^@/",
              message: "lib/ is the package: it imports nothing of the app (docs/library.md).",
            },
          ],
        },
      ],
    },
  },
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
    },
  },
);
