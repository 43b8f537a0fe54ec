// testHelpers' createCluster() on pgqueue: keeps the options a spec gave it (isolationLevel, requestTimeout,
// maxInFlightRequests, metadataMaxAge, clientId) for the factories; any use of KafkaJS's internal Cluster API fails
// loudly, so such a spec counts as not passing rather than passing by accident.
module.exports = class PgQueueCluster {
  constructor(options = {}) {
    this.__pgqueueOptions = options
    return new Proxy(this, {
      get(target, prop) {
        if (prop in target || typeof prop === 'symbol' || prop === 'then') return target[prop]
        throw new Error(`KafkaJS's internal Cluster API (cluster.${String(prop)}) is not part of the public API`)
      },
      // a spec that mocks a Cluster method (cluster.findControllerBroker = jest.fn(...)) tests KafkaJS's internals
      set(target, prop, value) {
        if (prop === '__pgqueueOptions') return Reflect.set(target, prop, value)
        throw new Error(`KafkaJS's internal Cluster API (cluster.${String(prop)} mocked) is not part of the public API`)
      },
    })
  }
}
