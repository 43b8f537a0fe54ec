// Soft and permanent deletes with Confluent's rules: a permanent delete needs a soft delete first; nothing that a
// live schema references may be soft-deleted, and nothing that any version references (soft-deleted ones included,
// whose ids still resolve) may be deleted permanently.
import type { Database } from '../db/database.js'
import { storeFor } from '../store/handle.js'
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
export async function deleteSubject(db: Database, subject: string, permanent: boolean): Promise<number[]> {
  return transaction(db, async (client) => {
    const { registryConfig, registryVersions } = storeFor(db, client)
    await registryVersions.lockSubject(subject)
    const all = await registryVersions.subjectVersions(subject, true)
    if (all.length === 0) throw subjectNotFound(subject)
    const live = all.filter((v) => !v.deleted)
    if (!permanent && live.length === 0) throw subjectSoftDeleted(subject)
    if (permanent && live.length > 0) throw subjectNotSoftDeleted(subject)
    const targets = permanent ? all : live
    for (const v of targets) {
      const users = await registryVersions.schemasReferencing(subject, [v.version], permanent)
      if (users.length > 0) throw referenceExists(subject, v.version, users)
    }
    if (!permanent) return registryVersions.softDeleteSubject(subject)
    const removed = await registryVersions.hardDeleteSubject(subject)
    await registryConfig.deleteCompatibility(subject) // nothing is left to configure
    return removed
  })
}

/** DELETE /subjects/{s}/versions/{v}[?permanent=true]: the version deleted. */
export async function deleteSubjectVersion(db: Database, subject: string, selector: VersionSelector, permanent: boolean): Promise<number> {
  return transaction(db, async (client) => {
    const { registryVersions } = storeFor(db, client)
    await registryVersions.lockSubject(subject)
    const all = await registryVersions.subjectVersions(subject, true)
    if (all.length === 0) throw subjectNotFound(subject)
    // "latest" is the newest live version for a soft delete, the newest of all for a permanent one
    const pool = permanent ? all : all.filter((v) => !v.deleted)
    const row = selector === 'latest' ? pool[pool.length - 1] : all.find((v) => v.version === selector)
    if (!row) throw versionNotFound(subject, selector)
    if (!permanent && row.deleted) throw versionSoftDeleted(subject, row.version)
    if (permanent && !row.deleted) throw versionNotSoftDeleted(subject, row.version)
    const users = await registryVersions.schemasReferencing(subject, [row.version], permanent)
    if (users.length > 0) throw referenceExists(subject, row.version, users)
    await registryVersions.deleteVersion(subject, row.version, permanent)
    return row.version
  })
}
