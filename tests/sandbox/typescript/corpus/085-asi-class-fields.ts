async () => {
  class Row {
    id: number
    name: string
    ['computed']: boolean
    tags: string[] = []
    score?: number
    *entries(): Generator<[string, unknown]> {
      yield ['id', this.id]
      yield ['name', this.name]
    }
    total!: number
    in: boolean
    static: string
    get: number
    async: boolean
    constructor(id: number, name: string) {
      this.id = id
      this.name = name
      this['computed'] = false
      this.in = this.static = '' as never
      this.get = 0
      this.async = false
    }
  }

  const users: { id: number; login: string }[] = await codemode.github_list_collaborators({ repo: 'acme/api' })
  return users.map((u) => Object.fromEntries(new Row(u.id, u.login).entries()))
}
