// Soft and permanent deletes with Confluent's rules: a permanent delete needs a soft delete first; nothing that a
// live schema references may be soft-deleted, and nothing that any version references (soft-deleted ones included,
// whose ids still resolve) may be deleted permanently.
import type { Database } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { deleteCompatibility } from '../store/registryConfig.js'
import { deleteVersion, hardDeleteSubject, lockSubject, schemasReferencing, softDeleteSubject, subjectVersions } from '../store/registryVersions.js'
import {
  referenceExists,
  subjectNotFound,
  subjectNotSoftDeleted,
  subjectSoftDeleted,
  versionNotFound,
  versionNotSoftDeleted,
  versionSoftDeleted,
} from './errors.js'
import type { VersionSelector } from '../store/registryTypes.js'
import { transaction } from '../store/transactions.js'

/** DELETE /subjects/{s}[?permanent=true]: the versions deleted. */
export async function deleteSubject(db: Database, t: Tables, subject: string, permanent: boolean): Promise<number[]> {
  return transaction(db, async (client) => {
    await lockSubject(client, t, subject)
    const all = await subjectVersions(client, t, subject, true)
    if (all.length === 0) throw subjectNotFound(subject)
    const live = all.filter((v) => !v.deleted)
    if (!permanent && live.length === 0) throw subjectSoftDeleted(subject)
    if (permanent && live.length > 0) throw subjectNotSoftDeleted(subject)
    const targets = permanent ? all : live
    for (const v of targets) {
      const users = await schemasReferencing(client, t, subject, [v.version], permanent)
      if (users.length > 0) throw referenceExists(subject, v.version, users)
    }
    if (!permanent) return softDeleteSubject(client, t, subject)
    const removed = await hardDeleteSubject(client, t, subject)
    await deleteCompatibility(client, t, subject) // nothing is left to configure
    return removed
  })
}

/** DELETE /subjects/{s}/versions/{v}[?permanent=true]: the version deleted. */
export async function deleteSubjectVersion(db: Database, t: Tables, subject: string, selector: VersionSelector, permanent: boolean): Promise<number> {
  return transaction(db, async (client) => {
    await lockSubject(client, t, subject)
    const all = await subjectVersions(client, t, subject, true)
    if (all.length === 0) throw subjectNotFound(subject)
    // "latest" is the newest live version for a soft delete, the newest of all for a permanent one
    const pool = permanent ? all : all.filter((v) => !v.deleted)
    const row = selector === 'latest' ? pool[pool.length - 1] : all.find((v) => v.version === selector)
    if (!row) throw versionNotFound(subject, selector)
    if (!permanent && row.deleted) throw versionSoftDeleted(subject, row.version)
    if (permanent && !row.deleted) throw versionNotSoftDeleted(subject, row.version)
    const users = await schemasReferencing(client, t, subject, [row.version], permanent)
    if (users.length > 0) throw referenceExists(subject, row.version, users)
    await deleteVersion(client, t, subject, row.version, permanent)
    return row.version
  })
}
