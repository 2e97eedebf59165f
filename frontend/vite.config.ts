/// <reference types="vitest/config" />
import vue from '@vitejs/plugin-vue'
import { defineConfig } from 'vite'

export default defineConfig({
  // Relative asset URLs: the same dist/ is served by Wails (embedded) and by the headless backend.
  base: './',
  plugins: [vue()],
  // vue-i18n's feature flags: Composition API only (smaller bundle), no devtools in production.
  define: {
    __VUE_I18N_FULL_INSTALL__: true,
    __VUE_I18N_LEGACY_API__: false,
    __INTLIFY_PROD_DEVTOOLS__: false,
  },
  build: {
    outDir: 'dist',
    // Vite empties dist/ first; public/.gitkeep is copied back so dist/.gitkeep (which Go's
    // //go:embed needs on a fresh clone) survives every build.
    emptyOutDir: true,
  },
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'happy-dom',
    environmentOptions: {
      // The HTTP door tests talk to a real node:http server on another port.
      happyDOM: { settings: { fetch: { disableSameOriginPolicy: true } } },
    },
    restoreMocks: true,
  },
})
