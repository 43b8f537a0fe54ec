import { describe, expect, it } from 'vitest'
import { statementName, statements } from '../../../src/store/statement.js'
import { tablesFor } from '../../../src/db/tables.js'

describe('statement names', () => {
  it('say the module and the statement, with a tag of the text', () => {
    expect(statementName('registryVersions', 'softDeleteSubject', 'SELECT 1')).toMatch(/^pgq_registry_versions_soft_delete_subject_[0-9a-f]{8}$/)
  })

  it('stay within the 63 bytes PostgreSQL keeps, the tag last', () => {
    const name = statementName('m'.repeat(40), 'k'.repeat(40), 'SELECT 1')
    expect(name.length).toBeLessThanOrEqual(63)
    expect(name).toMatch(/_[0-9a-f]{8}$/)
  })

  it('differ between schemas and between prefixes, and are built once per table set', () => {
    const sql = statements('topics', (t) => ({ all: `SELECT * FROM ${t.topic}` }))
    const tables = tablesFor('s1', 'p1')
    const names = [sql(tables), sql(tablesFor('s2', 'p1')), sql(tablesFor('s1', 'p2'))].map((s) => s.all.name)
    expect(new Set(names).size).toBe(3)
    expect(sql(tables)).toBe(sql(tables))
  })
})
