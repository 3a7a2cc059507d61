async () => {
  let count = 0
  interface Row { id: number }
  const rows: Row[] = await codemode.db_query({ sql: 'select id from jobs where state = $1', params: ['stuck'] })
  type Id = Row['id']
  ;[...rows].reverse().forEach(() => count++)
  type Ids = Id[]
  const ids: Ids = rows.map((r) => r.id)
  type Debug = boolean
  ;(ids as number[]).sort((a, b) => a - b)
  return { count, ids }
}
