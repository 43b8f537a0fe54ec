// Drops the schemas this run's pgqueue adapters created (KJS_SCHEMA_PREFIX_*).
const path = require('node:path')

module.exports = async () => {
  if (process.env.KJS_BACKEND !== 'pgqueue' || process.env.KJS_KEEP_SCHEMAS === '1') return
  const pg = require(path.join(process.env.KJS_PACKAGE, 'node_modules', 'pg'))
  const client = new pg.Client({ connectionString: process.env.KJS_DATABASE_URL })
  await client.connect()
  try {
    const { rows } = await client.query('SELECT nspname FROM pg_namespace WHERE nspname LIKE $1', [`${process.env.KJS_SCHEMA_PREFIX}\\_%`])
    for (const { nspname } of rows) await client.query(`DROP SCHEMA "${nspname.replace(/"/g, '""')}" CASCADE`)
  } finally {
    await client.end()
  }
}
