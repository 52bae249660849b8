import { defineConfig } from "vitest/config";

// The UI is served from the Go binary (go:embed of dist/), so paths are
// relative to the root and no dev proxy is needed for tests.
export default defineConfig({
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2020",
    chunkSizeWarningLimit: 400,
  },
  test: {
    include: ["src/**/*.test.ts"],
    environment: "node",
  },
});
