// How the console shows bytes (text, JSON, hex, cut at 64 KiB) and diffs two schema versions.
import { describe, expect, it } from 'vitest'
import { showBytes } from '../../../src/console/messages.js'
import { lineDiff } from '../../../src/console/ui/diff.js'

describe('showBytes', () => {
  it('null, text, JSON (pretty-printed) and bytes as hex', () => {
    expect(showBytes(null)).toEqual({ format: 'null', text: '' })
    expect(showBytes(Buffer.from('héllo\nworld'))).toEqual({ format: 'text', text: 'héllo\nworld' })
    expect(showBytes(Buffer.from('{"a":[1,2]}'))).toEqual({ format: 'json', text: '{\n  "a": [\n    1,\n    2\n  ]\n}' })
    expect(showBytes(Buffer.from('{not json'))).toEqual({ format: 'text', text: '{not json' })
    expect(showBytes(Buffer.from([0xff, 0x00, 0x01]))).toEqual({ format: 'hex', text: 'ff 00 01' })
    // valid UTF-8 with control characters is bytes, not text
    expect(showBytes(Buffer.from([0x41, 0x00, 0x42])).format).toBe('hex')
  })

  it('cuts long values at 64 KiB without splitting a character', () => {
    // 80,001 bytes; byte 65,536 is the first half of an é
    const shown = showBytes(Buffer.from(`a${'é'.repeat(40_000)}`))
    expect(shown).toMatchObject({ format: 'text', truncated: true })
    expect(shown.text).toBe(`a${'é'.repeat(32 * 1024 - 1)}`)
  })
})

describe('lineDiff', () => {
  it('keeps common lines and marks removed and added ones in order', () => {
    expect(lineDiff('a\nb\nc', 'a\nc\nd')).toEqual([
      { op: ' ', text: 'a' },
      { op: '-', text: 'b' },
      { op: ' ', text: 'c' },
      { op: '+', text: 'd' },
    ])
    expect(lineDiff('x', 'x')).toEqual([{ op: ' ', text: 'x' }])
  })
})
