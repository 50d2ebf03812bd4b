// The server-owned fields of every record (docs/api.md#records), named once: a
// client cannot set them, a collection schema cannot declare them, and every list can sort by
// the system ones.

export const SERVER_FIELDS = ['id', 'owner', 'created_at', 'updated_at', 'link'] as const;
export type ServerField = (typeof SERVER_FIELDS)[number];

/** Server fields a list may be sorted by (always indexed columns of the record's table). */
export const SYSTEM_SORT_FIELDS = ['id', 'created_at', 'updated_at'] as const;

export function isSystemSortField(field: string): boolean {
  return (SYSTEM_SORT_FIELDS as readonly string[]).includes(field);
}
