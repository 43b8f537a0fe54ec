// A CommonJS program whose only kafkajs comes through a dependency (kafka-helper-cjs requires it).
const { Kafka } = require('kafka-helper-cjs')
const { reportWhich, roundTrip } = require('./support.cjs')

roundTrip(Kafka).then(
  (received) => reportWhich({ received }),
  (e) => {
    console.error(e)
    process.exit(1)
  },
)
