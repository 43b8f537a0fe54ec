// KafkaJS 2.2.4's argument checks of the admin calls PostgreSQL has no equivalent of (ACLs, partition reassignments),
// ported from kafkajs/src/admin/index.js with the same messages: bad input is refused exactly as on Kafka, and only a
// valid request gets the KafkaJSNotImplemented that says why the call cannot work here.
import { AclOperationTypes, AclPermissionTypes, AclResourceTypes, ResourcePatternTypes } from '../kafkajs/exports.js'
import { fail } from './errors.js'

type Loose = Record<string, unknown>

const OPERATIONS: unknown[] = Object.values(AclOperationTypes)
const PATTERNS: unknown[] = Object.values(ResourcePatternTypes)
const PERMISSIONS: unknown[] = Object.values(AclPermissionTypes)
const RESOURCES: unknown[] = Object.values(AclResourceTypes)

const isString = (v: unknown) => typeof v === 'string'
const isStringOrUndefined = (v: unknown) => typeof v === 'string' || v === undefined

/** The enum checks createAcls and deleteAcls share (first invalid entry, shown as JSON). */
function checkAclEnums(entries: Loose[], resourcePatternWord: string): void {
  const check = (key: string, valid: unknown[], label: string) => {
    const invalid = entries.find((e) => !valid.includes(e[key]))
    if (invalid) fail(`Invalid ${label} ${String(invalid[key])}: ${JSON.stringify(invalid)}`)
  }
  check('operation', OPERATIONS, 'operation type')
  check('resourcePatternType', PATTERNS, resourcePatternWord)
  check('permissionType', PERMISSIONS, 'permission type')
  check('resourceType', RESOURCES, 'resource type')
}

export function validateCreateAcls(request: unknown): void {
  const acl = (request as Loose | undefined)?.acl
  if (!acl || !Array.isArray(acl)) fail(`Invalid ACL array ${String(acl)}`)
  const entries = acl as Loose[]
  if (entries.length === 0) fail('Empty ACL array')
  if (entries.some((e) => !isString(e.principal))) fail('Invalid ACL array, the principals have to be a valid string')
  if (entries.some((e) => !isString(e.host))) fail('Invalid ACL array, the hosts have to be a valid string')
  if (entries.some((e) => !isString(e.resourceName))) fail('Invalid ACL array, the resourceNames have to be a valid string')
  checkAclEnums(entries, 'resource pattern type')
}

export function validateDescribeAcls(request: unknown): void {
  const r = (request ?? {}) as Loose
  if (!isStringOrUndefined(r.principal)) fail('Invalid principal, the principal have to be a valid string')
  if (!isStringOrUndefined(r.host)) fail('Invalid host, the host have to be a valid string')
  if (!isStringOrUndefined(r.resourceName)) fail('Invalid resourceName, the resourceName have to be a valid string')
  if (!OPERATIONS.includes(r.operation)) fail(`Invalid operation type ${String(r.operation)}`)
  if (!PATTERNS.includes(r.resourcePatternType)) fail(`Invalid resource pattern filter type ${String(r.resourcePatternType)}`)
  if (!PERMISSIONS.includes(r.permissionType)) fail(`Invalid permission type ${String(r.permissionType)}`)
  if (!RESOURCES.includes(r.resourceType)) fail(`Invalid resource type ${String(r.resourceType)}`)
}

export function validateDeleteAcls(request: unknown): void {
  const filters = (request as Loose | undefined)?.filters
  if (!filters || !Array.isArray(filters)) fail(`Invalid ACL Filter array ${String(filters)}`)
  const entries = filters as Loose[]
  if (entries.length === 0) fail('Empty ACL Filter array')
  if (entries.some((e) => !isStringOrUndefined(e.principal))) fail('Invalid ACL Filter array, the principals have to be a valid string')
  if (entries.some((e) => !isStringOrUndefined(e.host))) fail('Invalid ACL Filter array, the hosts have to be a valid string')
  if (entries.some((e) => !isStringOrUndefined(e.resourceName))) fail('Invalid ACL Filter array, the resourceNames have to be a valid string')
  checkAclEnums(entries, 'resource pattern type')
}

/** The topic-list checks both reassignment calls share. */
function checkTopics(topics: unknown): Loose[] {
  if (!Array.isArray(topics)) fail(`Invalid topics array ${String(topics)}`)
  const entries = topics as Loose[]
  if (entries.some((t) => !isString(t.topic))) fail('Invalid topics array, the topic names have to be a valid string')
  if (new Set(entries.map((t) => t.topic)).size < entries.length) fail('Invalid topics array, it cannot have multiple entries for the same topic')
  return entries
}

const isIndex = (v: unknown) => typeof v === 'number' && v >= 0

export function validateAlterPartitionReassignments(request: unknown): void {
  const topics = (request as Loose | undefined)?.topics
  if (!topics) fail(`Invalid topics array ${String(topics)}`)
  for (const { topic, partitionAssignment } of checkTopics(topics)) {
    if (!partitionAssignment || !Array.isArray(partitionAssignment))
      fail(`Invalid partitions array: ${String(partitionAssignment)} for topic: ${String(topic)}`)
    for (const { partition, replicas } of partitionAssignment as Loose[]) {
      if (!isIndex(partition)) fail(`Invalid partitions index: ${String(partition)} for topic: ${String(topic)}`)
      if (!replicas || !Array.isArray(replicas))
        fail(`Invalid replica assignment: ${String(replicas)} for topic: ${String(topic)} on partition: ${String(partition)}`)
      if ((replicas as unknown[]).some((r) => !isIndex(r)))
        fail(
          `Invalid replica assignment: ${String(replicas)} for topic: ${String(topic)} on partition: ${String(partition)}. Replicas must be a non negative number`,
        )
    }
  }
}

export function validateListPartitionReassignments(request: unknown): void {
  const topics = (request as Loose | undefined)?.topics
  if (!topics) return
  for (const { topic, partitions } of checkTopics(topics)) {
    if (!partitions || !Array.isArray(partitions)) fail(`Invalid partition array: ${String(partitions)} for topic: ${String(topic)}`)
    if ((partitions as unknown[]).some((p) => !isIndex(p)))
      fail(
        `Invalid partition array: ${String(partitions)} for topic: ${String(topic)}. The partition indices have to be a valid number greater than 0.`,
      )
  }
}
