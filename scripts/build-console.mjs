#!/usr/bin/env node
// Bundles the web console (src/console/ui) into dist/console/ui: one minified script, one stylesheet, both named by
// content hash, and index.html (from page.html) naming them; the server fills in its %BASE% and %AUTH%. Run by `npm run build`.
import { build } from 'esbuild'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const src = path.join(root, 'src', 'console', 'ui')
const out = path.join(root, 'dist', 'console', 'ui')

fs.rmSync(out, { recursive: true, force: true })
const result = await build({
  entryPoints: [path.join(src, 'main.tsx'), path.join(src, 'style.css')],
  outdir: out,
  entryNames: '[name]-[hash]',
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
})
const outputs = Object.keys(result.metafile.outputs).map((f) => path.basename(f))
const pick = (ext) => outputs.find((f) => f.endsWith(ext))
const html = fs.readFileSync(path.join(src, 'page.html'), 'utf8').replace('%JS%', pick('.js')).replace('%CSS%', pick('.css'))
fs.writeFileSync(path.join(out, 'index.html'), html)
for (const f of fs.readdirSync(out)) console.log(`console: ${f} ${fs.statSync(path.join(out, f)).size} B`)
