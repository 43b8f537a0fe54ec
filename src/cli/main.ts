#!/usr/bin/env node
// kafkajs-pgqueue: the command-line tool. Dispatches `<command> [<subcommand>] [options]`; exit codes: 0 ok,
// 1 the operation failed, 2 bad usage (the command's help is printed).
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { UsageError, helpText, parse, type CliIO, type Command } from './args.js'
import { errorText } from './format.js'
import { consumeCommand } from './commands/consume.js'
import { deadLetterCommands } from './commands/deadLetters.js'
import { demoCommand } from './commands/demo.js'
import { groupCommands } from './commands/groups.js'
import { maintenanceCommands } from './commands/maintenance.js'
import { migrateCommand } from './commands/migrate.js'
import { migrateTransportCommand } from './commands/migrateTransport.js'
import { produceCommand } from './commands/produce.js'
import { serveCommand } from './commands/serve.js'
import { topicCommands } from './commands/topics.js'

const PROG = 'kafkajs-pgqueue'

export const COMMANDS: Command[] = [
  migrateCommand,
  ...topicCommands,
  ...groupCommands,
  produceCommand,
  consumeCommand,
  ...deadLetterCommands,
  ...maintenanceCommands,
  serveCommand,
  demoCommand,
  migrateTransportCommand,
]

function overview(commands: Command[], heading: string): string {
  const width = Math.max(...commands.map((c) => c.name.length))
  return `${heading}\n\nCommands:\n${commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}\n\nRun '${PROG} <command> --help' for a command's options.\n`
}

const GLOBAL_HELP = () =>
  overview(
    COMMANDS,
    `Usage: ${PROG} <command> [options]\n\nKafkaJS on PostgreSQL (DataHub pgQueue tables): schema, topics, groups, lag, messages and the operations API.\n` +
      'The connection comes from DATAHUB_PGQUEUE_* / DATABASE_URL / PG* like the library; --url, --schema and --prefix override it.',
  )

const isHelp = (arg: string | undefined) => arg === '--help' || arg === '-h' || arg === 'help'

/** The package's version: the nearest package.json named kafkajs-pgqueue above this file (src/ or dist/). */
function version(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string }
      if (pkg.name === PROG && pkg.version) return pkg.version
    } catch {
      // no package.json here: keep walking up
    }
  }
  return 'unknown'
}

/** Runs one invocation; resolves with the exit code. */
export async function runCli(argv: string[], io: CliIO): Promise<number> {
  const [first, second] = argv
  if (first === undefined || isHelp(first)) {
    ;(first === undefined ? io.stderr : io.stdout).write(GLOBAL_HELP())
    return first === undefined ? 2 : 0
  }
  if (first === '--version' || first === '-V') {
    io.stdout.write(`${version()}\n`)
    return 0
  }
  const family = COMMANDS.filter((c) => c.name.startsWith(`${first} `))
  const command = COMMANDS.find((c) => c.name === first) ?? family.find((c) => c.name === `${first} ${second}`)
  if (!command) {
    if (family.length > 0) {
      const text = overview(family, `Usage: ${PROG} ${first} <command> [options]`)
      if (isHelp(second)) {
        io.stdout.write(text)
        return 0
      }
      io.stderr.write(`error: ${second === undefined ? `${first} needs a command` : `unknown command "${first} ${second}"`}\n\n${text}`)
      return 2
    }
    io.stderr.write(`error: unknown command "${first}"\n\n${GLOBAL_HELP()}`)
    return 2
  }
  const rest = argv.slice(command.name.split(' ').length)
  // --help wins over anything else on the line, even options the command does not know
  if (rest.some((a) => a === '--help' || a === '-h')) {
    io.stdout.write(helpText(PROG, command))
    return 0
  }
  try {
    return (await command.run(parse(command, rest), io)) ?? 0
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`error: ${err.message}\n\n${helpText(PROG, command)}`)
      return 2
    }
    io.stderr.write(errorText(err))
    if (rest.includes('--verbose') || rest.includes('-v')) io.stderr.write(`${(err as Error)?.stack ?? ''}\n`)
    return 1
  }
}

if (typeof require !== 'undefined' && require.main === module) {
  void runCli(process.argv.slice(2), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }).then((code) => {
    process.exitCode = code
    // a handle left open by a failed operation must not keep the tool alive; output drains first
    setTimeout(() => process.exit(code), 5000).unref()
  })
}
