// A helper package in ESM that imports kafkajs itself and hands its Kafka class to the app.
import kafkajs from 'kafkajs'
export const Kafka = kafkajs.Kafka
