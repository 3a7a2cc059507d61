// Written without semicolons (prettier's `semi: false`): fields whose
// initializers end in `}`, each followed by a member that is erased whole.
const KEY = 'id'

class Query {
  defaults = { page: 1, perPage: 50 }
  declare readonly kind: string
  [KEY] = 0
  format = function (n: number) { return n.toFixed(0) }
  declare owner?: string
  ['label'] = 'open issues'
  static registry = new Map<string, Query>()
  declare static version: number
  [Symbol.iterator] = function* () { yield 1 }

  run(repo: string) {
    return codemode.search_issues({ repo, state: 'open', ...this.defaults })
  }
}

const q = new Query()
const result = await q.run('acme/api')
return { id: q[KEY], label: q['label'], count: (result as { total: number }).total }
