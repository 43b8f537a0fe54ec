// The peers of the anchors benchmark and the versions vendored under bench/anchors/<name>/.
export type Peer = 'pgque' | 'pgmq'
export const PEERS: readonly Peer[] = ['pgque', 'pgmq']
export const VERSIONS: Record<Peer, string> = { pgque: '0.2.0', pgmq: '1.5.1' }
