// The tests load the page the build makes: bundle it once before any file runs (esbuild, well under a second).
import { execFileSync } from 'node:child_process'
import { resolve } from 'node:path'

export default function setup(): void {
  execFileSync(process.execPath, ['scripts/build-console.mjs'], { cwd: resolve(__dirname, '..', '..'), stdio: 'inherit' })
}
