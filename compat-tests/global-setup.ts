import fs from 'node:fs';
import type { TestProject } from 'vitest/node';
import { findBroker, type RunningBroker } from './broker/index.js';

declare module 'vitest' {
  export interface ProvidedContext {
    kafkaBrokers: string[];
    /** Why the kafka backend cannot run (tests are then skipped with this reason), or null. */
    kafkaUnavailable: string | null;
  }
}

const log = (msg: string) => console.log(`[compat broker] ${msg}`);

/** Starts (or finds) one Kafka broker per run; the pgqueue backend needs none. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const transport = process.env.DATAHUB_MESSAGING_TRANSPORT ?? 'kafka';
  project.provide('kafkaBrokers', []);
  project.provide('kafkaUnavailable', null);
  if (transport !== 'kafka') return async () => {};

  let broker: RunningBroker;
  try {
    broker = await findBroker(log);
  } catch (e) {
    const reason = `no Kafka broker: ${(e as Error).message}`;
    if (process.env.COMPAT_REQUIRE_KAFKA === '1') throw new Error(`${reason} (COMPAT_REQUIRE_KAFKA=1)`);
    log(`${reason}\nkafka backend skipped (set COMPAT_REQUIRE_KAFKA=1 to fail instead)`);
    project.provide('kafkaUnavailable', reason.split('\n')[0]!);
    return async () => {};
  }
  const { fetchJarsMs, startMs } = broker.timings;
  log(`${broker.source} at ${broker.brokers.join(',')}: ${fetchJarsMs === undefined ? 'jars cached' : `jars fetched in ${fetchJarsMs} ms`}, ready in ${startMs} ms`);
  if (process.env.COMPAT_BROKER_INFO_FILE) {
    fs.writeFileSync(process.env.COMPAT_BROKER_INFO_FILE, JSON.stringify({ source: broker.source, brokers: broker.brokers, ...broker.timings }));
  }
  project.provide('kafkaBrokers', broker.brokers);
  return async () => {
    const stopping = Date.now();
    await broker.stop();
    log(`stopped in ${Date.now() - stopping} ms`);
  };
}
