import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';

// The console is served under /console/ (cmd/local, and the CloudFront distribution's
// bucket prefix), so every asset URL starts there. config.json beside index.html is
// written by whoever serves it (cmd/local; the deploy step from the stack's outputs).
export default defineConfig({
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    chunkSizeWarningLimit: 2000,
  },
  test: {
    include: ['src/**/*.test.ts'],
  },
});
