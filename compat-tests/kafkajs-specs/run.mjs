// Runs KafkaJS 2.2.4's own public-API integration specs, unmodified, against the real Kafka broker and against this
// package on PostgreSQL, and prints the pass ratio (docs/compat-suite.md, "KafkaJS's own specs").
//
//   node compat-tests/kafkajs-specs/run.mjs [--backend kafka|pgqueue]... [--spec <path-part>]...
//
// Needs: KAFKAJS_REPO (a git clone of tulios/kafkajs with tag v2.2.4; the npm package ships no specs), KJS_JEST_HOME (a
// folder where `npm install jest@25.5.4 jest-circus@25.5.4 jest-extended@0.11.5 execa@2.1.0 uuid@3.4.0 semver@6.3.1
// glob@7.2.3 jsonwebtoken@9.0.2 ip@1.1.9 mockdate@2.0.5` ran: KafkaJS's own dev dependencies, kept out of this
// package), KAFKA_BROKERS for the kafka column (e.g. under `tsx scripts/with-broker.mts`), `npm run build` done
// (the pgqueue column uses dist/, what an application gets), DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test).
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const pkgRoot = path.resolve(here, '..', '..')
const TAG = 'v2.2.4'

/** KafkaJS's integration specs that drive the public clients (unit specs of internals are left out). */
export const SPECS = [
  'src/admin/__tests__/alterConfigs.spec.js',
  'src/admin/__tests__/alterPartitionReassignments.spec.js',
  'src/admin/__tests__/connection.spec.js',
  'src/admin/__tests__/createAcls.spec.js',
  'src/admin/__tests__/createPartitions.spec.js',
  'src/admin/__tests__/createTopics.spec.js',
  'src/admin/__tests__/deleteAcls.spec.js',
  'src/admin/__tests__/deleteGroups.spec.js',
  'src/admin/__tests__/deleteTopicRecords.spec.js',
  'src/admin/__tests__/deleteTopics.spec.js',
  'src/admin/__tests__/describeAcls.spec.js',
  'src/admin/__tests__/describeCluster.spec.js',
  'src/admin/__tests__/describeConfigs.spec.js',
  'src/admin/__tests__/describeGroups.spec.js',
  'src/admin/__tests__/fetchOffsets.spec.js',
  'src/admin/__tests__/fetchTopicMetadata.spec.js',
  'src/admin/__tests__/fetchTopicOffsets.spec.js',
  'src/admin/__tests__/fetchTopicOffsetsByTimestamp.spec.js',
  'src/admin/__tests__/listGroups.spec.js',
  'src/admin/__tests__/listPartitionReassignments.spec.js',
  'src/admin/__tests__/listTopics.spec.js',
  'src/admin/__tests__/resetOffsets.spec.js',
  'src/admin/__tests__/setOffsets.spec.js',
  'src/admin/index.spec.js',
  'src/consumer/__tests__/assignerProtocolIntegration.spec.js',
  'src/consumer/__tests__/assignmentForUnsubscribedTopic.spec.js',
  'src/consumer/__tests__/commitOffsets.spec.js',
  'src/consumer/__tests__/connection.spec.js',
  'src/consumer/__tests__/consumeMessages.spec.js',
  'src/consumer/__tests__/controlBatches.spec.js',
  'src/consumer/__tests__/describeGroup.spec.js',
  'src/consumer/__tests__/emptyAssignment.spec.js',
  'src/consumer/__tests__/errorRecovery.spec.js',
  'src/consumer/__tests__/handlerErrorRecovery.spec.js',
  'src/consumer/__tests__/index.spec.js',
  'src/consumer/__tests__/instrumentationEvents.spec.js',
  'src/consumer/__tests__/logger.spec.js',
  'src/consumer/__tests__/misconfiguration.spec.js',
  'src/consumer/__tests__/pause.spec.js',
  'src/consumer/__tests__/rebalanceOnPartitionChange.spec.js',
  'src/consumer/__tests__/seek.spec.js',
  'src/consumer/__tests__/subscribe.spec.js',
  'src/producer/__tests__/concurrentTransaction.spec.js',
  'src/producer/__tests__/idempotentProduceMessages.spec.js',
  'src/producer/__tests__/producingToInvalidTopic.spec.js',
  'src/producer/compression.spec.js',
  'src/producer/index.spec.js',
]

const args = process.argv.slice(2)
const opt = (name) => args.flatMap((a, i) => (a === name && args[i + 1] ? [args[i + 1]] : []))
const backends = opt('--backend').length ? opt('--backend') : ['kafka', 'pgqueue']
const only = opt('--spec')
const specs = only.length ? SPECS.filter((s) => only.some((o) => s.includes(o))) : SPECS

const repo = process.env.KAFKAJS_REPO
const jestHome = process.env.KJS_JEST_HOME
if (!repo || !jestHome) throw new Error('set KAFKAJS_REPO (tulios/kafkajs clone) and KJS_JEST_HOME (see the header)')
const work = path.join(pkgRoot, '.cache', 'kafkajs-specs')
const tree = path.join(work, `kafkajs-${TAG}`)
prepareTree()

const results = {}
for (const backend of backends) {
  results[backend] = runBackend(backend)
  fs.writeFileSync(path.join(work, `tests-${backend}.json`), JSON.stringify(results[backend], null, 2))
}
// The other column from its last run (`--backend pgqueue` after a fix compares with the broker run before it).
for (const backend of ['kafka', 'pgqueue']) {
  const saved = path.join(work, `tests-${backend}.json`)
  if (!results[backend] && fs.existsSync(saved)) {
    console.log(`[kafkajs-specs] ${backend}: results of the last run (${saved})`)
    results[backend] = JSON.parse(fs.readFileSync(saved, 'utf8'))
  }
}
report(results)

/** KafkaJS at the tag, specs as they are; testHelpers' fixed localhost:9092/9095/9098 become KAFKA_BROKERS. */
function prepareTree() {
  if (!fs.existsSync(path.join(tree, 'package.json'))) {
    fs.mkdirSync(tree, { recursive: true })
    const tar = execFileSync('git', ['--git-dir', gitDir(repo), 'archive', TAG, 'index.js', 'src', 'testHelpers', 'types', 'package.json'], {
      maxBuffer: 256 * 1024 * 1024,
    })
    execFileSync('tar', ['-x', '-C', tree], { input: tar })
    const helpers = path.join(tree, 'testHelpers', 'index.js')
    const text = fs.readFileSync(helpers, 'utf8')
    const patched = text
      .replace(
        'const plainTextBrokers = (host = getHost()) => [`${host}:9092`, `${host}:9095`, `${host}:9098`]',
        "const plainTextBrokers = () => (process.env.KAFKA_BROKERS || 'localhost:9092').split(',')",
      )
      .replace('brokers: [`${getHost()}:9092`] })', 'brokers: plainTextBrokers() })')
    if (patched === text || !patched.includes('brokers: plainTextBrokers() })')) throw new Error('testHelpers patch did not apply')
    fs.writeFileSync(helpers, patched)
  }
  const nm = path.join(tree, 'node_modules')
  if (!fs.existsSync(nm)) fs.symlinkSync(path.join(jestHome, 'node_modules'), nm)
  teachJestNodePrefix()
}

/**
 * Jest 25 (KafkaJS 2.2.4's; Jest 27+ fails its `async (done) =>` hooks) predates `node:` module names, which this
 * package's dist/ uses: its builtin check and core require learn to strip the prefix (the Jest install is patched, not
 * the specs).
 */
function teachJestNodePrefix() {
  const patch = (file, from, to) => {
    const f = path.join(jestHome, 'node_modules', file)
    const text = fs.readFileSync(f, 'utf8')
    if (text.includes(to)) return
    if (!text.includes(from)) throw new Error(`cannot patch ${f} for node: names (Jest 25.5.4 expected)`)
    fs.writeFileSync(f, text.replace(from, to))
  }
  patch(
    'jest-resolve/build/isBuiltinModule.js',
    'return BUILTIN_MODULES.has(module);',
    "return BUILTIN_MODULES.has(module.startsWith('node:') ? module.slice(5) : module);",
  )
  patch(
    'jest-runtime/build/index.js',
    '  _requireCoreModule(moduleName) {\n',
    "  _requireCoreModule(moduleName) {\n    if (moduleName.startsWith('node:')) moduleName = moduleName.slice(5);\n",
  )
}

function gitDir(dir) {
  return fs.existsSync(path.join(dir, '.git')) ? path.join(dir, '.git') : dir
}

function runBackend(backend) {
  const out = path.join(work, `results-${backend}.json`)
  fs.rmSync(out, { force: true })
  const env = {
    ...process.env,
    NODE_ENV: 'test',
    KAFKA_VERSION: process.env.KAFKA_VERSION ?? '2.4',
    KAFKAJS_NO_PARTITIONER_WARNING: '1',
    KJS_TREE: tree,
    KJS_BACKEND: backend,
    KJS_PACKAGE: pkgRoot,
    KJS_SCHEMA_PREFIX: process.env.KJS_SCHEMA_PREFIX ?? 'kjs',
    KJS_DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  }
  if (backend === 'pgqueue') delete env.KAFKA_BROKERS
  else if (!env.KAFKA_BROKERS) throw new Error('the kafka column needs KAFKA_BROKERS')
  const jest = path.join(jestHome, 'node_modules', 'jest', 'bin', 'jest.js')
  const workers = process.env.KJS_WORKERS ?? '2'
  console.log(`[kafkajs-specs] ${backend}: ${specs.length} spec files, ${workers} workers`)
  spawnSync(
    process.execPath,
    [
      jest,
      '--config',
      path.join(here, 'jest.config.cjs'),
      '--ci',
      '--forceExit',
      `--maxWorkers=${workers}`,
      '--json',
      `--outputFile=${out}`,
      ...specs.map((s) => path.join(tree, s)),
    ],
    { cwd: tree, env, stdio: ['ignore', 'inherit', 'inherit'] },
  )
  const json = JSON.parse(fs.readFileSync(out, 'utf8'))
  const tests = {}
  for (const file of json.testResults) {
    const rel = path.relative(tree, file.name)
    if (file.assertionResults.length === 0) tests[`${rel} :: (file)`] = { status: 'failed', message: file.message }
    for (const t of file.assertionResults) {
      tests[`${rel} :: ${t.fullName}`] = { status: t.status, message: (t.failureMessages ?? []).join('\n') }
    }
  }
  return tests
}

function report(byBackend) {
  const summary = {}
  for (const [backend, tests] of Object.entries(byBackend)) {
    const counts = {}
    for (const t of Object.values(tests)) counts[t.status] = (counts[t.status] ?? 0) + 1
    summary[backend] = counts
    console.log(`[kafkajs-specs] ${backend}: ${JSON.stringify(counts)}`)
  }
  const { kafka, pgqueue } = byBackend
  if (kafka && pgqueue) {
    const ran = new Set(Object.keys(pgqueue))
    const onBroker = Object.keys(kafka).filter((k) => kafka[k].status === 'passed' && ran.has(k))
    const both = onBroker.filter((k) => pgqueue[k]?.status === 'passed')
    const internal = onBroker.filter((k) => pgqueue[k]?.status !== 'passed' && /internal Cluster API/.test(pgqueue[k]?.message ?? ''))
    const differing = onBroker.filter((k) => pgqueue[k]?.status !== 'passed')
    console.log('[kafkajs-specs] passing on the broker but not on pgqueue:')
    for (const k of differing) console.log(`  ${internal.includes(k) ? '(internal API) ' : ''}${k}\n    ${firstLine(pgqueue[k]?.message)}`)
    const publicApi = onBroker.length - internal.length
    console.log(
      `[kafkajs-specs] pass ratio: ${both.length}/${onBroker.length} of the tests passing on the broker pass on pgqueue (${pct(both.length, onBroker.length)}); ` +
        `public API only (tests that use KafkaJS's internal Cluster left out): ${both.length}/${publicApi} (${pct(both.length, publicApi)})`,
    )
  }
  fs.writeFileSync(path.join(work, 'summary.json'), JSON.stringify({ summary, results: byBackend }, null, 2))
}

function firstLine(msg) {
  return (
    (msg ?? '')
      .replace(/\u001b\[[0-9;]*m/g, '')
      .split('\n')
      .find((l) => l.trim()) ?? ''
  )
}

function pct(a, b) {
  return b ? `${((100 * a) / b).toFixed(1)} %` : 'n/a'
}
