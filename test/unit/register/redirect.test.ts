import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { shouldRedirect } from '../../../src/register/redirect.js'

const r = { ownDir: path.resolve('/app/node_modules/kafkajs-pgqueue/dist'), kafkajsDir: path.resolve('/app/node_modules/kafkajs') }

describe('register hook: which requests get this package', () => {
  it('redirects a bare kafkajs from the app and from its dependencies', () => {
    expect(shouldRedirect('kafkajs', '/app/index.js', r)).toBe(true)
    expect(shouldRedirect('kafkajs', '/app/node_modules/@nestjs/microservices/client/client-kafka.js', r)).toBe(true)
    expect(shouldRedirect('kafkajs', undefined, r)).toBe(true)
  })

  it('leaves this package and kafkajs itself on the real kafkajs', () => {
    expect(shouldRedirect('kafkajs', '/app/node_modules/kafkajs-pgqueue/dist/kafkajs/exports.js', r)).toBe(false)
    expect(shouldRedirect('kafkajs', '/app/node_modules/kafkajs/src/index.js', r)).toBe(false)
  })

  it('does not mistake a sibling directory with a common prefix for this package', () => {
    expect(shouldRedirect('kafkajs', '/app/node_modules/kafkajs-pgqueue/dist-other/x.js', r)).toBe(true)
    expect(shouldRedirect('kafkajs', '/app/node_modules/kafkajs-async-retry/dist/index.js', r)).toBe(true)
  })

  it('only touches the bare specifier', () => {
    expect(shouldRedirect('kafkajs/package.json', '/app/index.js', r)).toBe(false)
    expect(shouldRedirect('./kafkajs', '/app/index.js', r)).toBe(false)
    expect(shouldRedirect('kafkajs-async-retry', '/app/index.js', r)).toBe(false)
  })
})
