// A helper package in CommonJS that loads kafkajs itself, as many do, and hands its Kafka class to the app.
exports.Kafka = require('kafkajs').Kafka
