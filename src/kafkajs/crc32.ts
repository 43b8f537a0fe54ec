// IEEE 802.3 CRC-32 (zlib / java.util.zip.CRC32), needed for DataHub's partition rule.
// Node 20 has no zlib.crc32, and a 1 KB table is cheaper than a dependency.

const POLYNOMIAL = 0xedb88320 // reflected 0x04C11DB7

const TABLE: Uint32Array = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let bit = 0; bit < 8; bit++) c = c & 1 ? POLYNOMIAL ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

/** Unsigned CRC-32 of `data`; strings are hashed as their UTF-8 bytes. `previous` continues a running CRC. */
export function crc32(data: Uint8Array | string, previous = 0): number {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
  let crc = ~previous >>> 0
  for (let i = 0; i < bytes.length; i++) crc = TABLE[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8)
  return ~crc >>> 0
}
