import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { freePort } from './ports.js'
import { waitUntilReady } from './ready.js'
import type { RunningBroker } from './types.js'

/** 3.9.x: Kafka 4 dropped protocol versions that KafkaJS 2.2.4 still sends. */
export const KAFKA_VERSION = '3.9.1'

const brokerDir = __dirname
const cacheDir = path.resolve(brokerDir, '..', '.kafka')
const libsDir = path.join(cacheDir, `kafka-${KAFKA_VERSION}`, 'libs')
const runDir = path.join(cacheDir, 'run')
const logsDir = path.join(cacheDir, 'logs')
const pidFile = path.join(runDir, 'kafka.pid')

export const serverLog = path.join(logsDir, 'server.log')

/** Downloads the broker's jars from Maven Central once; later runs reuse the cache. */
export function ensureJars(log: (msg: string) => void): { cached: boolean; ms: number } {
  const marker = path.join(libsDir, '.complete')
  if (fs.existsSync(marker)) return { cached: true, ms: 0 }
  const started = Date.now()
  fs.rmSync(libsDir, { recursive: true, force: true })
  log(`fetching Apache Kafka ${KAFKA_VERSION} jars from Maven Central into ${path.relative(process.cwd(), libsDir)}`)
  const mvn = spawnSync(
    'mvn',
    [
      '-q',
      '-B',
      '-f',
      path.join(brokerDir, 'pom.xml'),
      `-Dkafka.version=${KAFKA_VERSION}`,
      'dependency:copy-dependencies',
      `-DoutputDirectory=${libsDir}`,
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  )
  if (mvn.error || mvn.status !== 0) {
    const why = mvn.error ? mvn.error.message : `exit ${mvn.status}`
    throw new Error(`mvn dependency:copy-dependencies failed (${why}):\n${tail(`${mvn.stdout ?? ''}${mvn.stderr ?? ''}`)}`)
  }
  fs.writeFileSync(marker, `${new Date().toISOString()}\n`)
  return { cached: false, ms: Date.now() - started }
}

/** Starts a single-node KRaft broker on free loopback ports and waits until KafkaJS can talk to it. */
export async function startLocalKafka(log: (msg: string) => void): Promise<RunningBroker> {
  if (!hasJava()) throw new Error('no `java` on PATH (needed to run the local Kafka broker)')
  const jars = ensureJars(log)
  stopStaleBroker()
  const started = Date.now()
  fs.rmSync(runDir, { recursive: true, force: true })
  fs.mkdirSync(runDir, { recursive: true })
  fs.mkdirSync(logsDir, { recursive: true })

  const [port, controllerPort] = [await freePort(), await freePort()]
  const propsFile = path.join(runDir, 'server.properties')
  const log4jFile = path.join(runDir, 'log4j.properties')
  fs.writeFileSync(propsFile, serverProperties(port, controllerPort))
  fs.writeFileSync(log4jFile, LOG4J)
  const classpath = path.join(libsDir, '*')
  const jvm = ['-Xms256m', '-Xmx512m', `-Dlog4j.configuration=file:${log4jFile}`, '-cp', classpath]

  const format = spawnSync('java', [...jvm, 'kafka.tools.StorageTool', 'format', '-t', clusterId(), '-c', propsFile], { encoding: 'utf8' })
  if (format.status !== 0) throw new Error(`kafka-storage format failed:\n${tail(`${format.stdout}${format.stderr}`)}`)

  const out = fs.openSync(serverLog, 'w')
  const child = spawn('java', [...jvm, 'kafka.Kafka', propsFile], { stdio: ['ignore', out, out] })
  fs.closeSync(out)
  fs.writeFileSync(pidFile, String(child.pid))
  const killOnExit = () => child.kill('SIGKILL')
  process.once('exit', killOnExit)
  let exited: string | null = null
  child.once('exit', (code, signal) => (exited = `Kafka exited early (code ${code}, signal ${signal})`))

  const brokers = [`127.0.0.1:${port}`]
  try {
    await waitUntilReady(brokers, { timeoutMs: 90_000, aborted: () => exited })
  } catch (e) {
    await stopChild(child)
    process.off('exit', killOnExit)
    throw new Error(`${(e as Error).message}\n--- tail of ${serverLog} ---\n${tail(readLog())}`, { cause: e })
  }
  return {
    brokers,
    source: `local Apache Kafka ${KAFKA_VERSION} (KRaft, pid ${child.pid})`,
    timings: { fetchJarsMs: jars.cached ? undefined : jars.ms, startMs: Date.now() - started },
    stop: async () => {
      await stopChild(child)
      process.off('exit', killOnExit)
      fs.rmSync(pidFile, { force: true })
    },
  }
}

export function logTail(): string {
  return tail(readLog())
}

function serverProperties(port: number, controllerPort: number): string {
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    `log.dirs=${path.join(runDir, 'data')}`,
    'num.partitions=1',
    'auto.create.topics.enable=true',
    'offsets.topic.replication.factor=1',
    // fewer internal partitions: the coordinators load faster on a small machine
    'offsets.topic.num.partitions=4',
    'transaction.state.log.num.partitions=4',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'group.initial.rebalance.delay.ms=0',
    'delete.topic.enable=true',
    // compacted-topic tests (suite/compaction.test.ts): the cleaner looks for work every 100 ms, not every 15 s
    'log.cleaner.backoff.ms=100',
    '',
  ].join('\n')
}

const LOG4J = [
  'log4j.rootLogger=INFO, stdout',
  'log4j.logger.kafka.request.logger=WARN',
  'log4j.appender.stdout=org.apache.log4j.ConsoleAppender',
  'log4j.appender.stdout.layout=org.apache.log4j.PatternLayout',
  'log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n',
  '',
].join('\n')

/** Kafka's Uuid text form: 16 random bytes, base64url without padding; never starting with '-'. */
function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url')
    if (!id.startsWith('-')) return id
  }
}

function hasJava(): boolean {
  return spawnSync('java', ['-version'], { stdio: 'ignore' }).status === 0
}

/** A run killed with SIGKILL leaves its broker behind; stop it only if the pid is still that broker. */
function stopStaleBroker(): void {
  const pid = Number(fs.existsSync(pidFile) ? fs.readFileSync(pidFile, 'utf8') : NaN)
  if (!Number.isInteger(pid)) return
  try {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    if (cmdline.includes('kafka.Kafka') && cmdline.includes(runDir)) process.kill(pid, 'SIGKILL')
  } catch {
    // not running any more
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
  await exited
  clearTimeout(timer)
}

function readLog(): string {
  try {
    return fs.readFileSync(serverLog, 'utf8')
  } catch {
    return '(no log)'
  }
}

function tail(text: string, lines = 40): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n')
}
