import { describe, expect, it } from 'vitest'
import { UsageError, helpText, int, pairs, parse, positionals, type Command } from '../../../src/cli/args.js'
import { table } from '../../../src/cli/format.js'
import { optionalBoolean, optionalInteger } from '../../../src/ops/http/io.js'

const command: Command = {
  name: 'things make',
  summary: 'makes things',
  args: '<thing> [options]',
  options: {
    count: { type: 'string', short: 'n', value: 'n', help: 'how many' },
    label: { type: 'string', multiple: true, value: 'k=v', help: 'a label' },
    dry: { type: 'boolean', help: 'do nothing' },
  },
  examples: ['things make box -n 3'],
  run: async () => 0,
}

describe('CLI arguments', () => {
  it('parses options, repeatable key=value pairs and positionals', () => {
    const p = parse(command, ['box', '-n', '3', '--label', 'a=1', '--label', 'b=x=y', '--dry'])
    expect(positionals(p, ['thing'])).toEqual(['box'])
    expect(int(p, 'count', { min: 1 })).toBe(3)
    expect(pairs(p, 'label')).toEqual([
      ['a', '1'],
      ['b', 'x=y'],
    ])
    expect(p.values.dry).toBe(true)
  })

  it('turns every kind of bad input into a UsageError naming the problem', () => {
    expect(() => parse(command, ['--nope'])).toThrow(UsageError)
    expect(() => parse(command, ['--count'])).toThrow(/argument missing/)
    expect(() => int(parse(command, ['-n', 'x']), 'count')).toThrow('--count must be an integer, got "x"')
    expect(() => int(parse(command, ['-n', '0']), 'count', { min: 1 })).toThrow('>= 1')
    expect(() => pairs(parse(command, ['--label', 'novalue']), 'label')).toThrow('--label takes key=value')
    expect(() => positionals(parse(command, []), ['thing'])).toThrow('missing <thing>')
    expect(() => positionals(parse(command, ['a', 'b']), ['thing'])).toThrow('unexpected argument "b"')
  })

  it('generates the help from the option table', () => {
    const text = helpText('tool', command)
    expect(text).toContain('Usage: tool things make <thing> [options]')
    expect(text).toMatch(/-n, --count <n>\s+how many/)
    expect(text).toMatch(/--label <k=v>\s+a label \(repeatable\)/)
    expect(text).toMatch(/-h, --help\s+show this help/)
    expect(text).toContain('Examples:\n  things make box -n 3')
  })
})

describe('table', () => {
  it('pads columns, right-aligns numbers and shows missing cells as -', () => {
    expect(
      table(
        ['name', 'count', 'note'],
        [
          ['a', 1, null],
          ['long-name', 100, 'x'],
        ],
      ),
    ).toBe('NAME       COUNT  NOTE\n' + 'a              1  -\n' + 'long-name    100  x\n')
    expect(table(['only'], [])).toBe('ONLY\n')
  })
})

describe('HTTP parameter parsing', () => {
  it('accepts absent values and the right types, rejects the rest with 400', () => {
    expect(optionalBoolean(undefined, 'x')).toBeUndefined()
    expect(optionalBoolean('true', 'x')).toBe(true)
    expect(optionalBoolean(false, 'x')).toBe(false)
    expect(() => optionalBoolean('yes', 'detailed')).toThrow(expect.objectContaining({ status: 400, message: 'detailed must be true or false' }))
    expect(optionalInteger('12', 'p')).toBe(12)
    expect(optionalInteger(3, 'p')).toBe(3)
    expect(() => optionalInteger('1.5', 'partitionId')).toThrow(expect.objectContaining({ status: 400 }))
  })
})
