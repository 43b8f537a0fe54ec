// DataHub presets: its topic catalogue and its row format, for sharing tables with DataHub's own clients.
export {
  DATAHUB_TOPICS,
  dataHubCatalogue,
  seedDataHubTopics,
  type DataHubSeedOptions,
  type DataHubTopicSettings,
  type SeededTopic,
} from './topics.js'
export { decodeDataHubRow, encodeDataHubRow, type DataHubHeaders, type DataHubRow, type DataHubRowInput, type DecodedDataHubRow } from './rows.js'
export { DATAHUB_AVRO_CONTENT_TYPE, DATAHUB_TOPIC_CONTENT_TYPE, dataHubLockKey, dataHubPartition, dataHubSubject } from './routing.js'
