// Argument parsing on node:util parseArgs, plus the help text generated from the same option table.
import { parseArgs } from 'node:util'
import type { Readable, Writable } from 'node:stream'

/** Bad usage: printed with the command's help, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}

export interface CliIO {
  stdin: Readable
  stdout: Writable
  stderr: Writable
}

export interface OptionSpec {
  type: 'string' | 'boolean'
  short?: string
  multiple?: boolean
  /** shown as --name <value> */
  value?: string
  help: string
}

export type OptionTable = Record<string, OptionSpec>

export interface Command {
  name: string
  summary: string
  /** e.g. '<topic> [options]' */
  args?: string
  description?: string
  options: OptionTable
  examples?: string[]
  run(parsed: Parsed, io: CliIO): Promise<number | void>
}

export interface Parsed {
  values: Record<string, string | boolean | string[] | undefined>
  positionals: string[]
}

export const HELP_OPTION: OptionTable = { help: { type: 'boolean', short: 'h', help: 'show this help' } }

export const CONNECTION_OPTIONS: OptionTable = {
  url: { type: 'string', value: 'postgres://…', help: 'PostgreSQL URL (default: DATAHUB_PGQUEUE_DATASOURCE_URL, DATABASE_URL, PG*, else embedded)' },
  schema: { type: 'string', value: 'name', help: 'queue schema (default: DATAHUB_PGQUEUE_SCHEMA or queue)' },
  prefix: { type: 'string', value: 'name', help: 'table prefix (default: DATAHUB_PGQUEUE_TABLE_PREFIX or metadata_queue)' },
  verbose: { type: 'boolean', short: 'v', help: 'log what the library does (stderr)' },
}

export const JSON_OPTION: OptionTable = { json: { type: 'boolean', help: 'print JSON for scripts instead of tables' } }

export function parse(command: Pick<Command, 'options'>, argv: string[]): Parsed {
  // parseArgs rejects keys that are present but undefined
  const options = Object.fromEntries(
    Object.entries({ ...command.options, ...HELP_OPTION }).map(([name, o]) => [
      name,
      { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) },
    ]),
  )
  try {
    const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true })
    return { values: values as Parsed['values'], positionals }
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
}

export function helpText(prog: string, command: Command): string {
  const lines = [`Usage: ${prog} ${command.name}${command.args ? ` ${command.args}` : ' [options]'}`, '', command.description ?? command.summary]
  const rows = Object.entries({ ...command.options, ...HELP_OPTION }).map(([name, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : '    '}--${name}${o.type === 'string' ? ` <${o.value ?? 'value'}>` : ''}`
    return [flag, o.help + (o.multiple ? ' (repeatable)' : '')] as const
  })
  const width = Math.max(...rows.map(([flag]) => flag.length))
  lines.push('', 'Options:', ...rows.map(([flag, help]) => `  ${flag.padEnd(width)}  ${help}`))
  if (command.examples?.length) lines.push('', 'Examples:', ...command.examples.map((e) => `  ${e}`))
  return `${lines.join('\n')}\n`
}

/** Typed accessors with usage errors that name the flag. */
export function str(p: Parsed, name: string): string | undefined {
  const v = p.values[name]
  return typeof v === 'string' ? v : undefined
}

export function flag(p: Parsed, name: string): boolean {
  return p.values[name] === true
}

export function list(p: Parsed, name: string): string[] {
  const v = p.values[name]
  return Array.isArray(v) ? v : typeof v === 'string' ? [v] : []
}

export function int(p: Parsed, name: string, range: { min?: number; max?: number } = {}): number | undefined {
  const raw = str(p, name)
  if (raw === undefined) return undefined
  const n = Number(raw)
  const { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = range
  if (!/^-?\d+$/.test(raw) || n < min || n > max) {
    throw new UsageError(
      `--${name} must be an integer${range.min !== undefined ? ` >= ${min}` : ''}${range.max !== undefined ? ` and <= ${max}` : ''}, got "${raw}"`,
    )
  }
  return n
}

/** `k=v` pairs of a repeatable option. */
export function pairs(p: Parsed, name: string): Array<[string, string]> {
  return list(p, name).map((entry) => {
    const at = entry.indexOf('=')
    if (at <= 0) throw new UsageError(`--${name} takes key=value, got "${entry}"`)
    return [entry.slice(0, at), entry.slice(at + 1)]
  })
}

export function positionals(p: Parsed, names: string[], { rest = false } = {}): string[] {
  if (p.positionals.length < names.length)
    throw new UsageError(
      `missing ${names
        .slice(p.positionals.length)
        .map((n) => `<${n}>`)
        .join(' ')}`,
    )
  if (!rest && p.positionals.length > names.length) throw new UsageError(`unexpected argument "${p.positionals[names.length]}"`)
  return p.positionals
}
