// `node --require kafkajs-pgqueue/register app.js` or `node --import kafkajs-pgqueue/register app.mjs`: with
// DATAHUB_MESSAGING_TRANSPORT=pgqueue every `require('kafkajs')` / `import 'kafkajs'` in the process, dependencies
// included (NestJS, helper packages), gets this package; with `kafka` or unset, nothing is changed. This is the
// transport toggle for code that loads kafkajs by name and cannot be edited.
import fs from 'node:fs'
import Module from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { resolveTransport } from '../config/resolve.js'
import { shouldRedirect, type Redirect } from './redirect.js'

type ResolveFilename = (request: string, parent: NodeModule | undefined, isMain: boolean, options?: unknown) => string
const CjsModule = Module as unknown as { _resolveFilename: ResolveFilename; register?: typeof Module.register }

/** Installs both hooks once; returns whether the process is on pgQueue. Throws on an unknown transport value. */
export function install(env: NodeJS.ProcessEnv = process.env): boolean {
  if (resolveTransport(undefined, env) !== 'pgqueue') return false
  const marker = Symbol.for('kafkajs-pgqueue.register')
  const holder = globalThis as Record<symbol, unknown>
  if (holder[marker]) return true
  holder[marker] = true

  const ownDir = path.resolve(__dirname, '..')
  const cjsEntry = require.resolve('../index.js')
  const esmEntry = path.join(ownDir, 'index.mjs')
  const redirect: Redirect = { ownDir, kafkajsDir: path.dirname(require.resolve('kafkajs/package.json')) }

  const original = CjsModule._resolveFilename
  CjsModule._resolveFilename = function (request, parent, isMain, options) {
    if (shouldRedirect(request, parent?.filename, redirect)) return cjsEntry
    return original.call(this, request, parent, isMain, options)
  }
  // the ESM face when built (dist/index.mjs); from sources the CommonJS entry serves both
  const target = pathToFileURL(fs.existsSync(esmEntry) ? esmEntry : cjsEntry).href
  const loader = pathToFileURL(path.join(__dirname, fs.existsSync(path.join(__dirname, 'loader.mjs')) ? 'loader.mjs' : 'loader.mts')).href
  Module.register(loader, { data: { ...redirect, target } })
  return true
}

install()
