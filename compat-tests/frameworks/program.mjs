// An ESM program whose only kafkajs comes through a dependency (kafka-helper-esm imports it).
import { Kafka } from 'kafka-helper-esm'
import { reportWhich, roundTrip } from './support.cjs'

reportWhich({ received: await roundTrip(Kafka) })
