// Jest config for KafkaJS 2.2.4's own specs, as KafkaJS's jest.config.js (testHelpers mapping, setup, circus runner),
// plus the resolver that routes `kafkajs` and, on pgqueue, the public factories (resolver.cjs).
const path = require('node:path')

const tree = process.env.KJS_TREE
module.exports = {
  rootDir: tree,
  moduleNameMapper: { '^testHelpers$': '<rootDir>/testHelpers/index.js' },
  setupFilesAfterEnv: ['<rootDir>/testHelpers/setup.js'],
  testPathIgnorePatterns: ['/node_modules/'],
  testRunner: 'jest-circus/runner',
  testEnvironment: path.join(__dirname, 'environment.cjs'),
  testRegex: '(/__tests__/.*\\.spec\\.js|(\\.|/)spec)\\.jsx?$',
  resolver: path.join(__dirname, 'resolver.cjs'),
  globalTeardown: path.join(__dirname, 'teardown.cjs'),
  watchman: false,
  bail: false,
}
